import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.Map;

/**
 * A program that runs out of memory the way most real ones do: its main thread fills a static map
 * until OutOfMemoryError, which nothing catches, so the thread dies and the JVM exits. Prints
 * "ready"; with an argument, waits until that file exists before it starts (so a test can let it
 * leak once heapd has armed it).
 */
public class OomExit {
    // Sized for the whole run: it never resizes, so the map is held by this static field only.
    static final Map<Integer, byte[]> CACHE = new HashMap<>(1 << 16);

    public static void main(String[] args) throws Exception {
        System.out.println("ready");
        System.out.flush();
        if (args.length > 0) {
            Path go = Paths.get(args[0]);
            while (!Files.exists(go)) Thread.sleep(20);
        }
        for (int i = 0; ; i++) {
            CACHE.put(i, new byte[16 * 1024]);
        }
    }
}
