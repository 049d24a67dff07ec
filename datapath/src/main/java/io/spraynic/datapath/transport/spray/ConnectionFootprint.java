package io.spraynic.datapath.transport.spray;

/**
 * S10.1: what a connection's state costs, part by part, as {@code SprayConnection#stateBytes()} reports it and the
 * planes experiment prints it: the model of one path's and one stream's bytes, which grow with the paths and streams a
 * connection is opened with. (The fixed tables' bytes are the connection's own, {@code fixedStateBytes()}; what an idle
 * connection holds in the JVM is measured, not modelled, by {@code NicConnectionMemoryTest}.)
 */
public final class ConnectionFootprint
{
    private ConnectionFootprint()
    {
    }

    /**
     * S10.1: bytes of state of one path, both directions: the send window's 256 records, the receive
     * bitmap, estimators, congestion control, per-path scalars and counters.
     */
    public static int pathStateBytes()
    {
        final int sendWindow = PathSendWindow.CAPACITY * (Long.BYTES + Long.BYTES + Integer.BYTES + 1) + 32;
        final int receiveWindow = PathReceiveWindow.WORDS * Long.BYTES + Integer.BYTES;
        final int rtt = 4 * Long.BYTES; // path-major in the connection's estimator
        final int cc = 4 * Long.BYTES;
        final int scalars = 4 * Integer.BYTES + 3 * Long.BYTES + 2 + 4 * Integer.BYTES + // sender side
            3 * Integer.BYTES + Long.BYTES + 1 + // receiver side
            Long.BYTES * 3; // array references
        return sendWindow + receiveWindow + rtt + cc + scalars + SprayCounters.pathStateBytes();
    }

    /**
     * S10.1: bytes of state of one stream: next MSN to send, completion list head and tail, error flag; next
     * MSN to complete, receives posted, error flag, MSN, syndrome and refusal number (S9.3); next RSN to send (S4.5).
     */
    public static int streamStateBytes()
    {
        return 9 * Integer.BYTES + 2;
    }
}
