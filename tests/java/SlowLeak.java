import java.util.ArrayList;
import java.util.List;

/**
 * A JVM whose heap fills slowly, or that holds a large cache filled once, for the dump rules'
 * tests. Arguments: MODE RATE CHURN [CACHE_PERCENT] [TAG]. In mode "leak" it adds 64 KiB arrays to
 * the static list LEAKED at RATE KiB per second until OutOfMemoryError; then it lets the list go,
 * prints "oom MILLIS" (the time since the epoch) and exits with status 3. In mode "cache" it fills
 * the static list CACHE to CACHE_PERCENT of the maximum heap once, collects, and keeps it. Both
 * allocate CHURN KiB per second of 4 KiB arrays that die young, and print "ready" when they start
 * doing so. TAG only names the JVM on its command line.
 */
public class SlowLeak {
    static final List<byte[]> LEAKED = new ArrayList<>();
    static final List<byte[]> CACHE = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        final boolean leak = args[0].equals("leak");
        final double rate = Double.parseDouble(args[1]);
        final double churn = Double.parseDouble(args[2]);
        if (!leak) {
            long want = (long) (Double.parseDouble(args[3]) / 100 * Runtime.getRuntime().maxMemory());
            for (long n = 0; n < want; n += 64 * 1024) CACHE.add(new byte[64 * 1024]);
            System.gc();
        }
        System.out.println("ready");
        System.out.flush();
        byte[][] young = new byte[256][];
        long start = System.nanoTime();
        double leaked = 0, churned = 0;
        int next = 0;
        try {
            while (true) {
                double seconds = (System.nanoTime() - start) / 1e9;
                for (; leak && leaked < rate * seconds; leaked += 64) LEAKED.add(new byte[64 * 1024]);
                for (; churned < churn * seconds; churned += 4) young[next++ & 255] = new byte[4096];
                Thread.sleep(5);
            }
        } catch (OutOfMemoryError e) {
            LEAKED.clear();
            System.out.println("oom " + System.currentTimeMillis());
            System.out.flush();
            System.exit(3);
        }
    }
}
