/**
 * A JVM whose threads come and go all the time: "churn" threads that live a few milliseconds,
 * started one after another by a "churner" thread. Prints "ready" once churning; idles until killed.
 */
public class ThreadChurn {
    public static void main(String[] args) throws Exception {
        Thread churner = new Thread(() -> {
            long n = 0;
            while (true) {
                Thread t = new Thread(() -> {
                    try {
                        Thread.sleep(1);
                    } catch (InterruptedException e) {
                        // exit
                    }
                }, "churn-" + (n++ % 1000));
                t.start();
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "churner");
        churner.setDaemon(true);
        churner.start();
        System.out.println("ready");
        System.out.flush();
        Object lock = new Object();
        synchronized (lock) {
            while (true) lock.wait();
        }
    }
}
