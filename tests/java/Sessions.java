import java.util.ArrayList;
import java.util.List;

/** A JVM leaking sessions into a static list, the classic leak; idles until killed. */
public class Sessions {
    static final List<Session> LEAK = new ArrayList<>();

    static final class Session {
        final String user;
        final byte[] payload = new byte[1000];
        Session(String user) {
            this.user = user;
        }
    }

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
        for (int i = 0; i < n; i++) {
            LEAK.add(new Session("user-" + i));
        }
        System.out.println("ready");
        System.out.flush();
        Object lock = new Object();
        synchronized (lock) {
            lock.wait();
        }
    }
}
