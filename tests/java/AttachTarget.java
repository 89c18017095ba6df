import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A JVM for heapd's attach tests. `AttachTarget` idles; `AttachTarget oom FILE` idles until FILE
 * exists, then fills the heap until OutOfMemoryError (so -XX:OnOutOfMemoryError runs), survives it
 * and idles again.
 */
public class AttachTarget {
    static List<long[]> hog = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        System.out.println("ready");
        System.out.flush();
        if (args.length == 2 && args[0].equals("oom")) {
            Path trigger = Path.of(args[1]);
            while (!Files.exists(trigger)) Thread.sleep(20);
            try {
                while (true) hog.add(new long[1 << 16]);
            } catch (OutOfMemoryError e) {
                hog = null;  // before anything else allocates
            }
            System.out.println("survived");
            System.out.flush();
        }
        Object lock = new Object();
        synchronized (lock) {
            while (true) lock.wait();
        }
    }
}
