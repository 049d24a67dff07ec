package io.spraynic.datapath.api;

import io.spraynic.datapath.verbs.WorkCompletion;

/**
 * Where a {@link Connection}'s requests complete, as {@code ibv_cq}: one application thread polls completions into
 * reused {@link WorkCompletion} holders, with no allocation, lock or exception.
 */
public interface CompletionQueue
{
    /**
     * Takes the oldest completion.
     *
     * @param into filled with it.
     * @return false when there was none.
     */
    boolean poll(WorkCompletion into);

    /**
     * Takes up to {@code into.length} completions, as {@code ibv_poll_cq}.
     *
     * @param into holders filled from index 0; none may be null.
     * @return completions taken.
     */
    int poll(WorkCompletion[] into);

    /** @return true when no completion waits (a snapshot). */
    boolean isEmpty();
}
