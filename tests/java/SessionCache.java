import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A session cache: maps of small objects holding many short, partly duplicate strings, records,
 * boxes and arrays of every type; idles until killed. Sizes every field packing a JVM may choose.
 */
public class SessionCache {
    static final class Node {
        final String key;
        final Object value;
        Node next;
        int hits;

        Node(String key, Object value) {
            this.key = key;
            this.value = value;
        }
    }

    record Attr(String name, String value, long stamp) {}

    static final class Session {
        final String id;
        final String user;
        final long created;
        final Map<String, Attr> attrs = new HashMap<>();
        final List<String> roles = new ArrayList<>();
        final int[] counters = new int[3];
        byte flags;
        short kind;
        char mark;
        boolean live;

        Session(String id, String user, long created) {
            this.id = id;
            this.user = user;
            this.created = created;
        }
    }

    static final ConcurrentHashMap<String, Session> SESSIONS = new ConcurrentHashMap<>();
    static final Node[] CHAINS = new Node[1024];
    static final Object[] MISC = new Object[16];

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
        Random random = new Random(42);
        for (int i = 0; i < n; i++) {
            Session s = new Session("s-" + i, "user-" + (i % 500), i);
            for (int a = 0; a < 3; a++) s.attrs.put("k" + a, new Attr("k" + a, "v" + random.nextInt(100), i));
            s.roles.add(i % 3 == 0 ? "admin" : "user-role-" + (i % 7));
            SESSIONS.put(s.id, s);
            Node node = new Node("n" + i, i % 2 == 0 ? Integer.valueOf(i) : Long.valueOf(i));
            node.next = CHAINS[i % CHAINS.length];
            CHAINS[i % CHAINS.length] = node;
        }
        MISC[0] = new long[100];
        MISC[1] = new double[7];
        MISC[2] = new float[3];
        MISC[3] = new short[5];
        MISC[4] = new boolean[9];
        MISC[5] = new char[11];
        MISC[6] = new Object();
        MISC[7] = new Object[0];
        MISC[8] = new int[0];
        MISC[9] = new byte[1];
        MISC[10] = new TreeMap<>(Map.of("a", 1));
        MISC[11] = new LinkedList<>(List.of(1, 2, 3));
        MISC[12] = new ArrayDeque<>(List.of("x"));
        MISC[13] = Optional.of("y");
        MISC[14] = new StringBuilder("abc");
        System.out.println("ready");
        System.out.flush();
        Object lock = new Object();
        synchronized (lock) {
            lock.wait();
        }
    }
}
