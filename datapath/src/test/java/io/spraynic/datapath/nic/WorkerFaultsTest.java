package io.spraynic.datapath.nic;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class WorkerFaultsTest
{
    @Test
    void shouldCountFrameAndLoopFaultsApartAndLogThemByReason()
    {
        final NicWorker.WorkerCounters counters = NicWorker.WorkerCounters.unpublished();
        final WorkerFaults faults = new WorkerFaults(counters.frameFaults(), counters.loopFaults(), "worker-test");
        faults.onFrameFault(new IllegalStateException("bad frame"));
        faults.onLoopFault("tick", new IllegalArgumentException("bad tick"));
        faults.onLoopFault("tick", new IllegalArgumentException("again"));
        assertEquals(1, counters.frameFaults().get());
        assertEquals(2, counters.loopFaults().get());
        assertEquals(3, faults.count());
        assertEquals(1L, faults.counts().get("frame " + IllegalStateException.class.getName()), faults.counts().toString());
        assertEquals(2L, faults.counts().get("tick " + IllegalArgumentException.class.getName()), faults.counts().toString());
    }
}
