import java.util.ArrayList;
import java.util.List;

/**
 * A thread leak: threads that sleep for good, each kept in a static list. Arguments: threads to start
 * at once, then a trigger file; prints "ready", and once the file exists starts one more every 2 ms
 * until the JVM cannot make another (a pids cgroup's limit: "unable to create native thread").
 */
public class ThreadLeak {
    static final List<Thread> LEAKED = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        for (int i = 0; i < threads; i++) leak();
        System.out.println("ready");
        System.out.flush();
        java.io.File trigger = new java.io.File(args[1]);
        while (!trigger.exists()) Thread.sleep(50);
        for (;;) {
            leak();
            Thread.sleep(2);
        }
    }

    static void leak() {
        Thread t = new Thread(() -> {
            try {
                Thread.sleep(Long.MAX_VALUE);
            } catch (InterruptedException e) {
                // ends the thread
            }
        }, "leak-" + LEAKED.size());
        t.setDaemon(true);
        t.start();
        LEAKED.add(t);
    }
}
