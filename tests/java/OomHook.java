import java.util.ArrayList;
import java.util.List;

/**
 * A JVM that runs out of memory on purpose: prints "ready", then fills its heap until
 * OutOfMemoryError. Run with -XX:OnOutOfMemoryError=CMD, it sits at a safepoint while CMD runs
 * (nothing can attach to it meanwhile), then ends with the error.
 */
public class OomHook {
    public static void main(String[] args) {
        System.out.println("ready");
        System.out.flush();
        List<long[]> hog = new ArrayList<>();
        while (true) hog.add(new long[1 << 16]);
    }
}
