import java.lang.ref.SoftReference;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** A small JVM with known shapes for heapd's tests and demo; idles until killed. */
public class Demo {
    static final List<Object> SESSIONS = new ArrayList<>();
    static final Map<String, int[]> CACHE = new HashMap<>();
    static final Map<Integer, Long> COUNTERS = new ConcurrentHashMap<>();
    static final LinkedList<String> LOG = new LinkedList<>();
    static Object weakHeld;
    static WeakReference<Object> WEAK;
    static SoftReference<byte[]> SOFT;

    static final class Session {
        final long created;
        final String user;
        final byte[] payload;
        int hits;
        boolean active;
        Session(long created, String user, int size) {
            this.created = created;
            this.user = user;
            this.payload = new byte[size];
            long x = created * 0x9E3779B97F4A7C15L + 1;
            for (int i = 0; i < size; i++) {
                x ^= x << 13;
                x ^= x >>> 7;
                x ^= x << 17;
                payload[i] = (byte) x;
            }
        }
    }

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        for (int i = 0; i < n; i++) {
            SESSIONS.add(new Session(i, "user-" + i, 1000 + i % 500));
            CACHE.put("k" + i, new int[i % 20]);
            COUNTERS.put(i, (long) i * 7);
            if (i % 10 == 0) LOG.add("event " + i + " \u00e9\u4e2d");
        }
        weakHeld = new Object();
        WEAK = new WeakReference<>(weakHeld);
        SOFT = new SoftReference<>(new byte[4096]);
        Thread worker = new Thread(Demo::idle, "demo-worker-\u00e9\u4e2d");
        worker.setDaemon(true);
        worker.start();
        System.out.println("ready");
        System.out.flush();
        idle();
    }

    static void idle() {
        Object lock = new Object();
        synchronized (lock) {
            while (true) {
                try {
                    lock.wait();
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }
}
