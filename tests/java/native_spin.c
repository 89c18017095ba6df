/* The JNI library of NativeSpin.java: a thread that spins in C code forever. Built by the tests
   with gcc -shared -fPIC against the JDK's include directory. */
#include <jni.h>

static volatile int heapd_spinning;

__attribute__((noinline)) void heapd_spin_forever(void) {
    volatile unsigned long turns = 0;
    heapd_spinning = 1;
    for (;;) turns++;
}

JNIEXPORT void JNICALL Java_NativeSpin_spin(JNIEnv* env, jclass cls) {
    (void)env;
    (void)cls;
    heapd_spin_forever();
}

JNIEXPORT jboolean JNICALL Java_NativeSpin_spinning(JNIEnv* env, jclass cls) {
    (void)env;
    (void)cls;
    return heapd_spinning ? JNI_TRUE : JNI_FALSE;
}
