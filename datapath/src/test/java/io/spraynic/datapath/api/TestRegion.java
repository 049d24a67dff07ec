package io.spraynic.datapath.api;

import java.lang.foreign.MemorySegment;

/** A region's keys and addresses with no memory behind them: for the request holders, which only copy them. */
record TestRegion(long address, long length, int lkey, int rkey) implements Region
{
    public MemorySegment segment()
    {
        return MemorySegment.NULL;
    }

    public int access()
    {
        return 0;
    }

    public boolean isRegistered()
    {
        return true;
    }
}
