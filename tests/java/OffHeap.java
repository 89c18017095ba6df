import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * A program whose memory is mostly outside its heap: it holds direct buffers of 1 MiB in a static
 * list and starts threads that park for good, then prints "ready". Arguments: MiB of direct buffers,
 * threads.
 */
public class OffHeap {
    static final List<ByteBuffer> HELD = new ArrayList<>();
    static final List<Thread> WORKERS = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        int mib = Integer.parseInt(args[0]);
        int threads = Integer.parseInt(args[1]);
        for (int i = 0; i < mib; i++) {
            ByteBuffer b = ByteBuffer.allocateDirect(1 << 20);
            for (int at = 0; at < b.capacity(); at += 4096) b.put(at, (byte) 1);  // resident, whatever the allocator
            HELD.add(b);
        }
        for (int i = 0; i < threads; i++) {
            Thread t = new Thread(() -> {
                try {
                    Thread.sleep(Long.MAX_VALUE);
                } catch (InterruptedException e) {
                    // ends the thread
                }
            }, "worker-" + i);
            t.setDaemon(true);
            t.start();
            WORKERS.add(t);
        }
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
