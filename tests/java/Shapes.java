import java.lang.ref.SoftReference;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** A JVM with known heap shapes for retained-size (dominator tree) tests; idles until killed. */
public class Shapes {
    static final List<Session> LEAK = new ArrayList<>();
    static Node CHAIN;
    static RingNode RING;
    static final Map<String, byte[]> SHARED_A = new HashMap<>();
    static final Map<String, byte[]> SHARED_B = new HashMap<>();
    static WeakReference<byte[]> WEAK;
    static SoftReference<byte[]> SOFT;
    static byte[] HELD;
    static WeakReference<byte[]> WEAK_TO_HELD;
    // An array held by an object and also by a weak reference, which keeps nothing alive: the
    // array goes when HOLDER goes.
    static Holder HOLDER;
    static WeakReference<byte[]> WEAK_TO_HOLDER_DATA;
    // An array held by an object and also by an object only a soft reference reaches (garbage as
    // far as strong references go): the array goes when BESIDE_SOFT goes.
    static Holder BESIDE_SOFT;
    static SoftReference<Holder> SOFT_TO_HOLDER;

    static final class Session {
        final String id;
        final byte[] payload = new byte[512];
        Session(String id) {
            this.id = id;
        }
    }

    static final class Holder {
        final byte[] data;
        Holder(byte[] data) {
            this.data = data;
        }
    }

    static final class Node {
        Node next;
        long value;
    }

    static final class RingNode {
        RingNode next;
        long value;
    }

    public static void main(String[] args) throws Exception {
        // Built in separate methods so that no local of main's frame (a GC root) points into a shape.
        buildLeak();
        buildChain();
        buildRing();
        buildShared();
        buildReferences();
        System.out.println("ready");
        System.out.flush();
        idle();
    }

    static void buildLeak() {
        for (int i = 0; i < 20_000; i++) {
            // No "+": string concatenation is an invokedynamic call site whose method handles (JDK
            // objects, cached through soft references) would hang below this class's constant pool.
            LEAK.add(new Session("session-".concat(Integer.toString(i))));
        }
    }

    static void buildChain() {
        for (int i = 0; i < 1_000_000; i++) {
            Node node = new Node();
            node.value = i;
            node.next = CHAIN;
            CHAIN = node;
        }
    }

    static void buildRing() {
        RingNode first = new RingNode();
        RingNode last = first;
        for (int i = 1; i < 1000; i++) {
            RingNode node = new RingNode();
            node.value = i;
            last.next = node;
            last = node;
        }
        last.next = first;
        RING = first;
    }

    static void buildShared() {
        for (int i = 0; i < 1000; i++) {
            byte[] shared = new byte[1024];
            SHARED_A.put("a".concat(Integer.toString(i)), shared);
            SHARED_B.put("b".concat(Integer.toString(i)), shared);
        }
    }

    static void buildReferences() {
        WEAK = new WeakReference<>(new byte[100_000]);
        SOFT = new SoftReference<>(new byte[100_000]);
        HELD = new byte[50_000];
        WEAK_TO_HELD = new WeakReference<>(HELD);
        HOLDER = new Holder(new byte[30_000]);
        WEAK_TO_HOLDER_DATA = new WeakReference<>(HOLDER.data);
        BESIDE_SOFT = new Holder(new byte[20_000]);
        SOFT_TO_HOLDER = new SoftReference<>(new Holder(BESIDE_SOFT.data));
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
