/**
 * A JVM whose heap stays big once stripped: a million linked nodes whose long fields hold random
 * values (strip zeroes primitive arrays, not fields), so its dump, stripped and compressed, is
 * tens of megabytes. Prints "ready" and idles until killed.
 */
public class RandomGraph {
    static final class Node {
        final long a, b, c;
        Node next;
        Node(long a, long b, long c, Node next) {
            this.a = a;
            this.b = b;
            this.c = c;
            this.next = next;
        }
    }

    static Node HEAD;

    public static void main(String[] args) throws Exception {
        int count = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        java.util.SplittableRandom random = new java.util.SplittableRandom(20);
        for (int i = 0; i < count; i++) HEAD = new Node(random.nextLong(), random.nextLong(), random.nextLong(), HEAD);
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
