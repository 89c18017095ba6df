/**
 * What heapd's OOM watch (-agentpath:libheapd_agent.so=oom) may cost a JVM that never fails: the
 * breakpoint capability it holds is known to slow some JVM paths, so the kinds of work it could touch
 * are timed: throwing exceptions with stack traces, small objects that escape analysis removes
 * (C2 drops it where local variables must be kept), short-lived allocations, and plain arithmetic.
 * Argument: rounds (the first three warm up and are not printed); with 0, it only starts and exits.
 */
public class OomWatchCost {
    record Point(double x, double y) {
        Point plus(Point o) {
            return new Point(x + o.x, y + o.y);
        }
    }

    static int depth(int n) {
        if (n == 0) throw new IllegalStateException("deep");
        return depth(n - 1) + 1;
    }

    static double points(int n) {
        Point sum = new Point(0, 0);
        for (int i = 0; i < n; i++) sum = sum.plus(new Point(i, 1));
        return sum.x() + sum.y();
    }

    static long churn(int n) {
        long total = 0;
        for (int i = 0; i < n; i++) {
            int[] a = new int[16];
            a[i & 15] = i;
            java.util.List<Integer> l = new java.util.ArrayList<>(4);
            l.add(i);
            total += a[3] + l.size();
        }
        return total;
    }

    static long compute(int n) {
        long w = 0;
        for (int i = 0; i < n; i++) w += (i * 31L) % 7;
        return w;
    }

    public static void main(String[] args) {
        int rounds = Integer.parseInt(args[0]);
        double sink = 0;
        for (int round = 0; round < rounds; round++) {
            long t0 = System.nanoTime();
            for (int i = 0; i < 200_000; i++) {
                try {
                    depth(10);
                } catch (IllegalStateException e) {
                    sink++;
                }
            }
            long t1 = System.nanoTime();
            sink += points(50_000_000);
            long t2 = System.nanoTime();
            sink += churn(20_000_000);
            long t3 = System.nanoTime();
            sink += compute(300_000_000);
            long t4 = System.nanoTime();
            if (round >= 3)
                System.out.printf("exceptions %.1f points %.3f churn %.3f compute %.3f%n", (t1 - t0) / 2e5,
                                  (t2 - t1) / 5e7, (t3 - t2) / 2e7, (t4 - t3) / 3e8);
        }
        if (sink == 42) System.out.println();
    }
}
