/**
 * A JVM with one thread running Java code without end (spin(), a pure computation), one sleeping
 * and one waiting on a monitor, for the CPU samples' tests: every sample of a thread running Java
 * code is spin()'s. Prints "ready"; runs until killed.
 */
public class CpuSpin {
    static volatile long sink;

    static long spin() {
        long x = 1;
        while (true) {
            for (int i = 0; i < 1_000_000; i++) x = x * 6364136223846793005L + 1442695040888963407L;
            sink = x;
        }
    }

    public static void main(String[] args) throws Exception {
        Thread spinner = new Thread(CpuSpin::spin, "spinner");
        spinner.setDaemon(true);
        spinner.start();
        Object lock = new Object();
        Thread waiter = new Thread(() -> {
            synchronized (lock) {
                try {
                    lock.wait();
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "waiter");
        waiter.setDaemon(true);
        waiter.start();
        System.out.println("ready");
        System.out.flush();
        while (true) Thread.sleep(1000);
    }
}
