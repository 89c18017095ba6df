import java.util.ArrayList;
import java.util.List;

/**
 * A JVM whose strings and thread names are markup, for the HTML report's tests: a thread named by
 * the first argument, and a static list holding 50 separate copies of it (duplicate strings) and
 * an 8 MiB array. Prints "ready", then idles until killed.
 */
public class Hostile {
    static final List<Object> HELD = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        final String name = args[0];
        Thread sleeper = new Thread(() -> {
            try {
                Thread.sleep(Long.MAX_VALUE);
            } catch (InterruptedException e) {
                // ends the thread
            }
        }, name);
        sleeper.setDaemon(true);
        sleeper.start();
        for (int i = 0; i < 50; i++) HELD.add(new String(name.toCharArray()));
        HELD.add(new byte[8 << 20]);
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
