/**
 * A JVM with one thread, "native-spinner", spinning forever in native code: heapd_spin_forever of
 * tests/java/native_spin.c, a JNI library whose path is the first argument. Prints "ready" once the
 * thread spins; idles until killed.
 */
public class NativeSpin {
    static native void spin();

    static native boolean spinning();

    public static void main(String[] args) throws Exception {
        System.load(args[0]);
        Thread spinner = new Thread(NativeSpin::spin, "native-spinner");
        spinner.setDaemon(true);
        spinner.start();
        while (!spinning()) Thread.sleep(10);
        System.out.println("ready");
        System.out.flush();
        Object lock = new Object();
        synchronized (lock) {
            while (true) lock.wait();
        }
    }
}
