import java.io.BufferedWriter;
import java.io.File;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.stream.Stream;
import org.graalvm.visualvm.lib.jfluid.heap.Heap;
import org.graalvm.visualvm.lib.jfluid.heap.HeapFactory;
import org.graalvm.visualvm.lib.jfluid.heap.Instance;
import org.graalvm.visualvm.lib.jfluid.heap.JavaClass;

/**
 * Reference retained sizes from VisualVM's heap library, one object a line ("id retained shallow class"):
 * the top N objects, then, after a line "--", the given ids or (--all) every instance and class object.
 */
public class RetainedSizes {
    public static void main(String[] args) throws Exception {
        boolean all = args.length == 3 && args[2].equals("--all");
        if (args.length != 2 && !all && !(args.length == 4 && args[2].equals("--ids"))) {
            System.err.println("usage: RetainedSizes FILE N [--ids ID1,ID2,... | --all]");
            System.exit(2);
        }
        // The library keeps a FILE.hwcache directory beside the dump and reuses it; open the dump
        // through a link in a scratch directory so every run computes afresh and leaves nothing behind.
        Path scratch = Files.createTempDirectory("retained-sizes");
        try {
            Path dump = Path.of(args[0]).toAbsolutePath();
            Path link = Files.createSymbolicLink(scratch.resolve(dump.getFileName()), dump);
            run(link.toFile(), Integer.parseInt(args[1]), args.length == 4 ? args[3] : null, all);
        } finally {
            try (Stream<Path> files = Files.walk(scratch)) {
                files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
            }
        }
    }

    static void run(File file, int n, String ids, boolean all) throws Exception {
        long t0 = System.nanoTime();
        Heap heap = HeapFactory.createHeap(file);
        long t1 = System.nanoTime();
        System.err.printf("createHeap: %.3f s%n", (t1 - t0) / 1e9);

        // The library ranks with a strict ">" against the current minimum, so n must be at least 1.
        List<Instance> top = heap.getBiggestObjectsByRetainedSize(Math.max(n, 1)).subList(0, n);
        long t2 = System.nanoTime();
        System.err.printf("retained: %.3f s%n", (t2 - t1) / 1e9);

        PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out), 1 << 16));
        for (Instance i : top) {
            if (i != null) { // null when n exceeded the number of objects
                print(out, i);
            }
        }
        if (ids != null) {
            out.println("--");
            for (String id : ids.split(",")) {
                Instance instance = heap.getInstanceByID(Long.parseLong(id.trim()));
                if (instance == null) {
                    throw new IllegalArgumentException("no instance with id " + id);
                }
                print(out, instance);
            }
        } else if (all) {
            out.println("--");
            for (Iterator<Instance> it = heap.getAllInstancesIterator(); it.hasNext(); ) {
                print(out, it.next());
            }
            // The iterator leaves out class objects; their instances come by id.
            for (JavaClass c : heap.getAllClasses()) {
                Instance mirror = heap.getInstanceByID(c.getJavaClassId());
                if (mirror != null) {
                    print(out, mirror);
                }
            }
        }
        out.flush();
    }

    static void print(PrintWriter out, Instance i) {
        out.println(i.getInstanceId() + " " + i.getRetainedSize() + " " + i.getSize() + " " + i.getJavaClass().getName());
    }
}
