// The library's entry points, the only symbols it exports: HotSpot calls Agent_OnLoad for
// -agentpath:LIB=OPTIONS (the OOM watch with `oom`, else allocation sampling) and Agent_OnAttach for each attach `load`
// of LIB (the same library loaded again is not a second copy: each load is one more command to the agent already
// there).
#include <jni.h>
#include <jvmti.h>

#include <string>

#include "agent/agent_options.h"
#include "agent/oom_watch.h"
#include "agent/sampler.h"

extern "C" {

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM* vm, char* options, void*) {
    heapd::agent::agent_options parsed;
    std::string error;
    heapd::agent::parse_agent_options(options, parsed, error);
    if (parsed.what == heapd::agent::command::oom)
        return heapd::agent::oom_watch::instance().on_load(vm, parsed, error);
    return heapd::agent::sampler::instance().on_load(vm, parsed, error);
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM* vm, char* options, void*) {
    heapd::agent::agent_options parsed;
    std::string error;
    heapd::agent::parse_agent_options(options, parsed, error);
    return heapd::agent::sampler::instance().on_attach(vm, parsed, error);
}

JNIEXPORT void JNICALL Agent_OnUnload(JavaVM*) {}

}  // extern "C"
