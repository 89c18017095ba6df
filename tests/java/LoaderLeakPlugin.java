/** The class LoaderLeak defines again in every class loader it makes (see LoaderLeak). */
public class LoaderLeakPlugin {
    public final byte[] state = new byte[1024];

    public LoaderLeakPlugin() {}
}
