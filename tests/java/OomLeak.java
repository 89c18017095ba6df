import java.util.HashMap;
import java.util.Map;

/**
 * A JVM that runs out of memory through a growing static map, the classic cache leak: prints
 * "ready", fills CACHE with 16 KB arrays until OutOfMemoryError, keeps the map, and sleeps for the
 * number of seconds in its first argument (default 600) so it can be dumped after its
 * OnOutOfMemoryError hook. With -XX:+ExitOnOutOfMemoryError it ends at the error instead.
 */
public class OomLeak {
    // Sized for the whole run: it never resizes, so the error strikes in main's own allocation and
    // the map is reachable from the class's static field only, not from a frame of HashMap's code.
    static final Map<Integer, byte[]> CACHE = new HashMap<>(1 << 14);

    // Let go of after the error, so what runs next (the sleep, the hook's attach) finds some room.
    static byte[] reserve = new byte[1 << 20];

    public static void main(String[] args) throws Exception {
        long seconds = args.length > 0 ? Long.parseLong(args[0]) : 600;
        System.out.println("ready");
        System.out.flush();
        try {
            for (int i = 0; ; i++) {
                byte[] value = new byte[16 * 1024];
                CACHE.put(i, value);
            }
        } catch (OutOfMemoryError e) {
            // Keep the map: the dump taken after the hook shows it.
            reserve = null;
        }
        Thread.sleep(seconds * 1000);
    }
}
