import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.graalvm.visualvm.lib.jfluid.heap.Heap;
import org.graalvm.visualvm.lib.jfluid.heap.HeapFactory;
import org.graalvm.visualvm.lib.jfluid.heap.Instance;

/** Reference retained sizes from VisualVM's heap library: top N objects, or given ids ("id retained shallow class"). */
public class RetainedSizes {
    public static void main(String[] args) throws Exception {
        if (args.length != 2 && !(args.length == 4 && args[2].equals("--ids"))) {
            System.err.println("usage: RetainedSizes FILE N [--ids ID1,ID2,...]");
            System.exit(2);
        }
        // The library keeps a FILE.hwcache directory beside the dump and reuses it; open the dump
        // through a link in a scratch directory so every run computes afresh and leaves nothing behind.
        Path scratch = Files.createTempDirectory("retained-sizes");
        try {
            Path dump = Path.of(args[0]).toAbsolutePath();
            Path link = Files.createSymbolicLink(scratch.resolve(dump.getFileName()), dump);
            run(link.toFile(), Integer.parseInt(args[1]), args.length == 4 ? args[3] : null);
        } finally {
            try (Stream<Path> files = Files.walk(scratch)) {
                files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
            }
        }
    }

    static void run(File file, int n, String ids) throws Exception {
        long t0 = System.nanoTime();
        Heap heap = HeapFactory.createHeap(file);
        long t1 = System.nanoTime();
        System.err.printf("createHeap: %.3f s%n", (t1 - t0) / 1e9);

        // The library ranks with a strict ">" against the current minimum, so n must be at least 1.
        List<Instance> objects = heap.getBiggestObjectsByRetainedSize(Math.max(n, 1)).subList(0, n);
        long t2 = System.nanoTime();
        System.err.printf("retained: %.3f s%n", (t2 - t1) / 1e9);

        if (ids != null) {
            objects = new ArrayList<>();
            for (String id : ids.split(",")) {
                Instance instance = heap.getInstanceByID(Long.parseLong(id.trim()));
                if (instance == null) {
                    throw new IllegalArgumentException("no instance with id " + id);
                }
                objects.add(instance);
            }
        }
        for (Instance i : objects) {
            if (i == null) {
                continue; // n exceeded the number of objects
            }
            System.out.println(i.getInstanceId() + " " + i.getRetainedSize() + " " + i.getSize() + " "
                    + i.getJavaClass().getName());
        }
    }
}
