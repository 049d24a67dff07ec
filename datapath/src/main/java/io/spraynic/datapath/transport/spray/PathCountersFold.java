package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.TransportCounters;

/**
 * Told each path's counters of a traffic period just before the connection gives them back to its engine's pool,
 * where they are zeroed and lent to another connection (issue 13): the one moment to add them to a total kept
 * elsewhere, such as the NIC's counters file. Engine thread; must not keep {@code period}.
 */
@FunctionalInterface
public interface PathCountersFold
{
    /**
     * @param path   the path.
     * @param period its counters since the connection borrowed them.
     */
    void fold(int path, TransportCounters period);
}
