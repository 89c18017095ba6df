// BigHeap: builds a large live heap of a few million small objects (HashMaps, ArrayLists, strings,
// arrays) for the histogram benchmark, prints "ready" and idles until killed.
//
//   java -Xmx3g BigHeap [scale]
//
// At scale 1.0 a live heap dump (jcmd <pid> GC.heap_dump) is about 600-700 MB of HPROF.
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public final class BigHeap {
    // A small record-like object: the bulk of the heap.
    static final class Item {
        final long id;
        final int count;
        final double score;
        final String name;
        Item link;

        Item(long id, int count, double score, String name) {
            this.id = id;
            this.count = count;
            this.score = score;
            this.name = name;
        }
    }

    // A smaller object with a reference and a primitive array.
    static final class Point {
        final int x;
        final int y;
        final Object tag;
        final short[] weights;

        Point(int x, int y, Object tag, short[] weights) {
            this.x = x;
            this.y = y;
            this.tag = tag;
            this.weights = weights;
        }
    }

    // Everything below stays reachable from these statics.
    static final List<Map<Integer, Item>> maps = new ArrayList<>();
    static final List<Map<String, Point>> pointMaps = new ArrayList<>();
    static final List<List<Object>> lists = new ArrayList<>();
    static final List<Object> arrays = new ArrayList<>();

    public static void main(String[] args) throws InterruptedException {
        double scale = args.length > 0 ? Double.parseDouble(args[0]) : 1.0;
        int mapEntries = (int) (1_800_000 * scale);
        int pointEntries = (int) (600_000 * scale);
        int listItems = (int) (1_600_000 * scale);
        int smallArrays = (int) (300_000 * scale);

        // Integer -> Item maps: HashMap$Node, Integer, Item and a String per entry.
        String[] names = new String[1024];
        for (int i = 0; i < names.length; ++i) names[i] = "shared-name-" + i;
        final int mapCount = 8;
        for (int m = 0; m < mapCount; ++m) {
            Map<Integer, Item> map = new HashMap<>();
            for (int i = m; i < mapEntries; i += mapCount) {
                String name = (i % 4 == 0) ? ("item-" + i) : names[i & 1023];
                map.put(i, new Item(i, i * 7, i * 0.5, name));
            }
            maps.add(map);
        }

        // String -> Point maps: unique String keys (String + byte[]) and small short[] arrays.
        final int pointMapCount = 4;
        for (int m = 0; m < pointMapCount; ++m) {
            Map<String, Point> map = new HashMap<>();
            for (int i = m; i < pointEntries; i += pointMapCount) {
                short[] w = (i % 3 == 0) ? new short[4 + (i & 7)] : null;
                map.put("point-" + i, new Point(i, -i, (i % 5 == 0) ? Long.valueOf(i) : null, w));
            }
            pointMaps.add(map);
        }

        // ArrayLists of Items chained to their neighbours, and of boxed values.
        final int listCount = 40;
        Item previous = null;
        for (int l = 0; l < listCount; ++l) {
            List<Object> list = new ArrayList<>();
            for (int i = l; i < listItems; i += listCount) {
                Item item = new Item(i, i, i * 0.25, names[(i * 31) & 1023]);
                item.link = previous;
                previous = item;
                list.add(item);
                if ((i & 3) == 0) list.add(Double.valueOf(i));
            }
            lists.add(list);
        }

        // Small and medium primitive and object arrays, plus a few large ones.
        for (int i = 0; i < smallArrays; ++i) {
            switch (i % 4) {
                case 0 -> arrays.add(new int[8 + (i & 15)]);
                case 1 -> arrays.add(new long[4 + (i & 7)]);
                case 2 -> arrays.add(new char[16 + (i & 31)]);
                default -> arrays.add(new Object[] {names[i & 1023], null, arrays.get(i - 1)});
            }
        }
        for (int i = 0; i < 4; ++i) arrays.add(new byte[(int) (4_000_000 * scale)]);
        for (int i = 0; i < 2; ++i) arrays.add(new double[(int) (500_000 * scale)]);

        System.out.println("ready");
        System.out.flush();
        while (true) Thread.sleep(60_000);
    }
}
