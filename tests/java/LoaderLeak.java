import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;

/**
 * A redeploying server's metaspace leak: each "deployment" is a class loader of its own defining its
 * own copy of LoaderLeakPlugin, and an instance of each copy stays in a static list, so every loader
 * and everything it defined stays too. Argument: deployments; then prints "ready". With a second
 * argument, a trigger file: once it exists, a deployment every 5 ms for good (a leak that ends at
 * -XX:MaxMetaspaceSize).
 */
public class LoaderLeak {
    static final List<Object> KEPT = new ArrayList<>();
    static int deployed;

    public static void main(String[] args) throws Exception {
        int deployments = Integer.parseInt(args[0]);
        for (int i = 0; i < deployments; i++) deploy();
        System.out.println("ready");
        System.out.flush();
        if (args.length < 2) Thread.sleep(Long.MAX_VALUE);
        java.io.File trigger = new java.io.File(args[1]);
        while (!trigger.exists()) Thread.sleep(50);
        for (;;) {
            deploy();
            Thread.sleep(5);
        }
    }

    static void deploy() throws Exception {
        URL classes = LoaderLeak.class.getProtectionDomain().getCodeSource().getLocation();
        // No parent but the boot loader: the plugin is found in the classes directory, by this loader.
        URLClassLoader loader = new URLClassLoader("deployment-" + deployed++, new URL[] {classes}, null);
        KEPT.add(loader.loadClass("LoaderLeakPlugin").getDeclaredConstructor().newInstance());
    }
}
