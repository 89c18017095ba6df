import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Holds the old generation at a chosen occupancy and keeps collecting it, for dump rules' tests.
 * Arguments: LOW HIGH FLAG [PERIOD_MS]. Fills the old generation to LOW percent of its maximum (as
 * its memory pool measures it after a collection), prints "ready", then calls System.gc() every
 * PERIOD_MS (default 200); once the file FLAG exists it fills up to HIGH percent. Meant for
 * -XX:+UseSerialGC, where System.gc() is a full collection (hsperfdata's sun.gc.collector.1) that
 * moves every live object into the old generation.
 */
public class OldGenFill {
    static final List<byte[]> KEPT = new ArrayList<>();

    // The old generation's pool, or the whole heap's for collectors without generations (ZGC).
    static MemoryPoolMXBean oldPool() {
        MemoryPoolMXBean heap = null;
        for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
            String name = p.getName();
            if (p.getType() != MemoryType.HEAP) continue;
            if (name.contains("Old") || name.contains("Tenured")) return p;
            if (heap == null && p.getUsage().getMax() > 0) heap = p;
        }
        if (heap == null) throw new IllegalStateException("no old generation pool");
        return heap;
    }

    // Allocates 64 KiB arrays, kept, until the old generation after a full collection holds percent.
    static void fillTo(MemoryPoolMXBean old, double percent) {
        final int chunk = 64 * 1024;
        while (true) {
            System.gc();
            long max = old.getUsage().getMax();
            long used = old.getUsage().getUsed();
            long missing = (long) (percent / 100.0 * max) - used;
            if (missing <= 0) return;
            for (long added = 0; added < missing; added += chunk) KEPT.add(new byte[chunk]);
        }
    }

    public static void main(String[] args) throws Exception {
        double low = Double.parseDouble(args[0]);
        double high = Double.parseDouble(args[1]);
        Path flag = Path.of(args[2]);
        long period = args.length > 3 ? Long.parseLong(args[3]) : 200;
        MemoryPoolMXBean old = oldPool();
        fillTo(old, low);
        System.out.println("ready");
        System.out.flush();
        boolean raised = false;
        while (true) {
            if (!raised && Files.exists(flag)) {
                fillTo(old, high);
                raised = true;
                System.out.println("filled " + old.getUsage().getUsed() * 100 / old.getUsage().getMax() + "%");
                System.out.flush();
            }
            Thread.sleep(period);
            System.gc();
        }
    }
}
