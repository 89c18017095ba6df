import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A JVM that leaks on demand: each time the file named by its first argument appears, it adds
 * exactly COUNT (second argument) new Leaky objects to a static list, deletes the file and prints
 * "grown". Prints "ready" once it polls; idles until killed.
 */
public class Leaky {
    static final List<Leaky> LEAKED = new ArrayList<>();

    final long serial;
    final long createdNanos;
    final int generation;

    Leaky(long serial, int generation) {
        this.serial = serial;
        this.createdNanos = System.nanoTime();
        this.generation = generation;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: Leaky TRIGGER_FILE COUNT");
            System.exit(2);
        }
        Path trigger = Path.of(args[0]);
        int count = Integer.parseInt(args[1]);
        int generation = 0;
        System.out.println("ready");
        System.out.flush();
        while (true) {
            if (Files.exists(trigger)) {
                ++generation;
                for (int i = 0; i < count; i++) LEAKED.add(new Leaky(LEAKED.size(), generation));
                Files.delete(trigger);  // after the objects are in the list: the test dumps once it is gone
                System.out.println("grown");
                System.out.flush();
            }
            Thread.sleep(20);
        }
    }
}
