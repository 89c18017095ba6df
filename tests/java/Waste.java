import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A JVM with known amounts of waste for the waste report's tests; idles until killed. Collections
 * are subclasses of its own so that each shape has a class (and a report row) to itself. Strings
 * are built at run time, so no literal of the same contents exists.
 */
public class Waste {
    static final int LATIN_COPIES = 1000;   // "waste-dup-latin", each with its own value array
    static final int SHARED_COPIES = 500;   // "waste-shared-array", all sharing one value array
    static final int UTF16_COPIES = 200;    // "waste-utf16-\u20ac" (coder 1)
    static final int LONG_COPIES = 50;      // "waste-long-" and 100 'x'
    static String[] latin, shared, utf16, longText;

    static final class EmptyMap<K, V> extends HashMap<K, V> {}
    static final class SparseMap<K, V> extends HashMap<K, V> {
        SparseMap(int capacity) {
            super(capacity);
        }
    }
    static final class LazyMap<K, V> extends HashMap<K, V> {}
    static final class FullMap<K, V> extends HashMap<K, V> {}
    static final class EmptyList<E> extends ArrayList<E> {
        EmptyList(int capacity) {
            super(capacity);
        }
    }
    static final class SparseList<E> extends ArrayList<E> {
        SparseList(int capacity) {
            super(capacity);
        }
    }
    static final class UnallocatedList<E> extends ArrayList<E> {}
    static final class EmptyConcurrentMap<K, V> extends ConcurrentHashMap<K, V> {}
    static final class SparseConcurrentMap<K, V> extends ConcurrentHashMap<K, V> {}

    static final ArrayList<Object> COLLECTIONS = new ArrayList<>();
    static Long[] longs;
    static Integer[] ints;
    static Double[] doubles;
    static short[][] zeros, nonZeros;

    public static void main(String[] args) throws Exception {
        buildStrings();
        buildCollections();
        buildBoxes();
        buildArrays();
        System.out.println("ready");
        System.out.flush();
        idle();
    }

    static void buildStrings() {
        latin = new String[LATIN_COPIES];
        for (int i = 0; i < LATIN_COPIES; i++) latin[i] = new StringBuilder("waste-dup-").append("latin").toString();
        shared = new String[SHARED_COPIES];
        shared[0] = new StringBuilder("waste-shared-").append("array").toString();
        for (int i = 1; i < SHARED_COPIES; i++) shared[i] = new String(shared[0]);  // shares the value array
        utf16 = new String[UTF16_COPIES];
        for (int i = 0; i < UTF16_COPIES; i++) utf16[i] = new StringBuilder("waste-utf16-").append('\u20ac').toString();
        longText = new String[LONG_COPIES];
        for (int i = 0; i < LONG_COPIES; i++) {
            StringBuilder sb = new StringBuilder("waste-long-");
            for (int j = 0; j < 100; j++) sb.append('x');
            longText[i] = sb.toString();
        }
    }

    static void buildCollections() {
        for (int i = 0; i < 400; i++) {  // a 16-slot table, size 0
            EmptyMap<Integer, Boolean> m = new EmptyMap<>();
            m.put(1, true);
            m.remove(1);
            COLLECTIONS.add(m);
        }
        for (int i = 0; i < 300; i++) {  // 3 entries in a 256-slot table
            SparseMap<Integer, Boolean> m = new SparseMap<>(256);
            for (int k = 0; k < 3; k++) m.put(k, true);
            COLLECTIONS.add(m);
        }
        for (int i = 0; i < 50; i++) COLLECTIONS.add(new LazyMap<Integer, Boolean>());  // no table
        for (int i = 0; i < 20; i++) {  // 12 entries in 16 slots: full
            FullMap<Integer, Boolean> m = new FullMap<>();
            for (int k = 0; k < 12; k++) m.put(k, true);
            COLLECTIONS.add(m);
        }
        for (int i = 0; i < 500; i++) COLLECTIONS.add(new EmptyList<Integer>(100));  // 100 slots, empty
        for (int i = 0; i < 250; i++) {  // 2 elements in 40 slots
            SparseList<Integer> l = new SparseList<>(40);
            l.add(1);
            l.add(2);
            COLLECTIONS.add(l);
        }
        for (int i = 0; i < 60; i++) COLLECTIONS.add(new UnallocatedList<Integer>());  // shared empty array
        for (int i = 0; i < 100; i++) {  // a 16-bin table, nothing in it
            EmptyConcurrentMap<Integer, Boolean> m = new EmptyConcurrentMap<>();
            m.put(1, true);
            m.remove(1);
            COLLECTIONS.add(m);
        }
        for (int i = 0; i < 100; i++) {  // 1 entry in 16 bins
            SparseConcurrentMap<Integer, Boolean> m = new SparseConcurrentMap<>();
            m.put(1, true);
            COLLECTIONS.add(m);
        }
        for (int i = 0; i < 100; i++) {  // a plain HashMap of 64 slots holding 1 entry, inside each set
            HashSet<Integer> s = new HashSet<>(64);
            s.add(i);
            COLLECTIONS.add(s);
        }
    }

    static void buildBoxes() {
        longs = new Long[5000];  // 100 distinct values, none in Long's cache
        for (int i = 0; i < longs.length; i++) longs[i] = Long.valueOf(1_000_000L + i % 100);
        ints = new Integer[3000];  // 10 distinct values
        for (int i = 0; i < ints.length; i++) ints[i] = Integer.valueOf(100_000 + i % 10);
        doubles = new Double[1000];  // one value
        for (int i = 0; i < doubles.length; i++) doubles[i] = Double.valueOf(0.5);
    }

    static void buildArrays() {
        zeros = new short[700][];
        for (int i = 0; i < zeros.length; i++) zeros[i] = new short[100];
        nonZeros = new short[10][];
        for (int i = 0; i < nonZeros.length; i++) {
            nonZeros[i] = new short[100];
            nonZeros[i][99] = 1;
        }
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
