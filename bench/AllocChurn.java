/**
 * An allocation-heavy program for the sampling agent's overhead benchmark (run_sampling_bench.sh):
 * threads allocate small arrays and objects (16 to 1,040 bytes) into rings, so most die young and
 * some live a while, as in a server. Warms up, then prints the allocations per second over the
 * measured seconds. WORK rounds of arithmetic between allocations (default 0) bring the allocation
 * rate down from the extreme to what busy services allocate.
 *
 *   java AllocChurn WARMUP_SECONDS MEASURE_SECONDS THREADS [WORK]
 */
public class AllocChurn {
    static final class Node {
        final Object payload;
        final Node next;
        Node(Object payload, Node next) {
            this.payload = payload;
            this.next = next;
        }
    }

    static volatile boolean measuring = false, done = false;

    public static void main(String[] args) throws Exception {
        final double warmup = Double.parseDouble(args[0]), measure = Double.parseDouble(args[1]);
        final int threads = Integer.parseInt(args[2]);
        final int work = args.length > 3 ? Integer.parseInt(args[3]) : 0;
        final long[] counts = new long[threads * 8];  // one slot per thread, 64 bytes apart
        Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int slot = t * 8;
            workers[t] = new Thread(() -> {
                Object[] ring = new Object[1 << 16];
                long n = 0, i = 0, bytes = 0;
                long acc = 0;
                while (!done) {
                    for (int w = 0; w < work; w++) acc = acc * 6364136223846793005L + w;
                    int size = 16 + (int) ((i * 2654435761L) & 1023);
                    Object o = (i & 3) == 0 ? new Node(new byte[size], null) : new byte[size];
                    ring[(int) (i & (ring.length - 1))] = o;
                    i++;
                    if (measuring) {
                        n++;
                        // Heap bytes: a 16-byte array header, elements rounded up to 8; a Node is 24.
                        bytes += ((16 + size + 7) & ~7) + ((i & 3) == 1 ? 24 : 0);
                    }
                    if ((i & 4095) == 0) {
                        counts[slot] = n;
                        counts[slot + 1] = bytes;
                    }
                }
                counts[slot] = n;
                counts[slot + 1] = bytes;
                if (acc == 42) System.out.print("");  // keeps the work from being optimized away
            });
            workers[t].start();
        }
        Thread.sleep((long) (warmup * 1000));
        measuring = true;
        Thread.sleep((long) (measure * 1000));
        measuring = false;
        done = true;
        long total = 0, bytes = 0;
        for (Thread w : workers) w.join();
        for (int t = 0; t < threads; t++) {
            total += counts[t * 8];
            bytes += counts[t * 8 + 1];
        }
        System.out.printf("allocations_per_second %.0f%n", total / measure);
        System.out.printf("bytes_per_second %.0f%n", bytes / measure);
    }
}
