import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * A program whose memory is mostly outside its heap: it holds direct buffers of 1 MiB in a static
 * list (and a slice of one more in another static) and starts threads that park for good, then
 * prints "ready". Arguments: MiB of direct buffers,
 * threads, and optionally a trigger file: once it exists, the program adds a touched 1 MiB direct
 * buffer every 5 ms for good (a leak the kernel ends at the memory cgroup's limit), or, given a
 * fourth argument, that many MiB a second.
 */
public class OffHeap {
    static final List<ByteBuffer> HELD = new ArrayList<>();
    static final List<Thread> WORKERS = new ArrayList<>();
    static ByteBuffer view;

    public static void main(String[] args) throws Exception {
        int mib = Integer.parseInt(args[0]);
        int threads = Integer.parseInt(args[1]);
        for (int i = 0; i < mib; i++) HELD.add(touched(1 << 20));
        if (mib > 0) view = touched(1 << 20).slice();
        for (int i = 0; i < threads; i++) {
            Thread t = new Thread(() -> {
                try {
                    Thread.sleep(Long.MAX_VALUE);
                } catch (InterruptedException e) {
                    // ends the thread
                }
            }, "worker-" + i);
            t.setDaemon(true);
            t.start();
            WORKERS.add(t);
        }
        System.out.println("ready");
        System.out.flush();
        if (args.length < 3) Thread.sleep(Long.MAX_VALUE);
        java.io.File trigger = new java.io.File(args[2]);
        while (!trigger.exists()) Thread.sleep(50);
        long interval = args.length < 4 ? 5_000_000L : 1_000_000_000L / Integer.parseInt(args[3]);
        for (long next = System.nanoTime();; ) {
            HELD.add(touched(1 << 20));
            next += interval;
            long wait = next - System.nanoTime();
            if (wait > 0) Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
        }
    }

    static ByteBuffer touched(int bytes) {
        ByteBuffer b = ByteBuffer.allocateDirect(bytes);
        for (int at = 0; at < b.capacity(); at += 4096) b.put(at, (byte) 1);  // resident, whatever the allocator
        return b;
    }
}
