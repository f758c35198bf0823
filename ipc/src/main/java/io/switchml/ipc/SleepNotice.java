package io.switchml.ipc;

/**
 * What a reader of the shared-memory port posts before it sleeps, where its writers look after writing (see
 * {@link IpcPoller}): one {@link WakeFlag} for a worker thread, the flags of every ring it reads for a switch port.
 */
public interface SleepNotice {
    /** The reader is about to look for work one last time and then sleep. */
    void sleep();

    /** The reader is awake (woken, or found work before it slept). */
    void awake();
}
