import java.io.File;
import java.util.ArrayList;
import java.util.List;

/**
 * Allocations with known sites for the allocation-sampling agent's tests. Prints "ready", then each
 * time the trigger file (args[0]) appears: keep() holds 200 byte arrays of exactly 1 MiB each,
 * churn() allocates CHURN_BYTES in 1 KiB arrays that die at once, big() allocates 25 arrays of 4 MiB
 * that are dropped; then it deletes the trigger file and idles. Sizes are of the objects in the heap
 * (16-byte array header + elements), so the truth is exact. With "forever" as args[1] it churns
 * without end instead, for tests of a JVM that exits while sampled.
 */
public class AllocSites {
    static final int KEPT = 200;
    static final int KEPT_SIZE = 1 << 20;
    static final long CHURN_BYTES = 2L << 30;
    static final int CHURN_SIZE = 1024;
    static final int BIG = 25;
    static final int BIG_SIZE = 4 << 20;
    static final int HEADER = 16;

    static final List<byte[]> kept = new ArrayList<>();
    static final byte[][] sink = new byte[16][];

    static void keep() {
        for (int i = 0; i < KEPT; i++) kept.add(new byte[KEPT_SIZE - HEADER]);
    }

    static void churn() {
        for (long i = 0; i < CHURN_BYTES / CHURN_SIZE; i++) sink[(int) (i & 15)] = new byte[CHURN_SIZE - HEADER];
    }

    static void big() {
        for (int i = 0; i < BIG; i++) sink[i & 15] = new byte[BIG_SIZE - HEADER];
        java.util.Arrays.fill(sink, null);
    }

    public static void main(String[] args) throws Exception {
        File trigger = new File(args[0]);
        System.out.println("ready");
        System.out.flush();
        if (args.length > 1 && args[1].equals("forever"))
            while (true) churn();
        while (true) {
            if (trigger.exists()) {
                keep();
                churn();
                big();
                trigger.delete();
            }
            Thread.sleep(20);
        }
    }
}
