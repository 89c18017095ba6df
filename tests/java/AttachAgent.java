import java.lang.instrument.Instrumentation;

/** A Java agent for heapd's attach tests: records its options in a system property, or fails when told to. */
public class AttachAgent {
    public static void agentmain(String options, Instrumentation instrumentation) {
        if ("fail".equals(options)) throw new IllegalStateException("the agent was told to fail");
        System.setProperty("heapd.agent.options", String.valueOf(options));
    }
}
