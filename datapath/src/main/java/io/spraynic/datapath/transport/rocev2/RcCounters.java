package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.transport.TransportCounters;

/**
 * The RC engine's event counters, one slot each, in the style of {@code ParseCounters}: single writer (the
 * engine's thread), plain stores; another thread may read slightly stale values. The lead's counters file
 * can copy them periodically.
 */
public final class RcCounters
{
    /** RC packets given to the engine. */
    public static final int RX_PACKETS = 0;
    /** Frames the engine wrote. */
    public static final int TX_PACKETS = 1;
    /** Request packets (SEND, WRITE, READ request) sent for the first time. */
    public static final int TX_REQUESTS = 2;
    /** Request packets sent again by go-back-N. */
    public static final int RETRANSMITTED = 3;
    /** READ response packets sent. */
    public static final int TX_READ_RESPONSES = 4;
    /** ACKs sent. */
    public static final int TX_ACKS = 5;
    /** NAK PSN sequence error sent. */
    public static final int TX_NAK_SEQUENCE = 6;
    /** NAK remote access error sent. */
    public static final int TX_NAK_ACCESS = 7;
    /** NAK invalid request sent. */
    public static final int TX_NAK_INVALID = 8;
    /** RNR NAK sent. */
    public static final int TX_RNR_NAK = 9;
    /** CNPs sent (notification point). */
    public static final int TX_CNP = 10;
    /** ACKs received. */
    public static final int RX_ACKS = 11;
    /** NAKs received (any code). */
    public static final int RX_NAKS = 12;
    /** RNR NAKs received. */
    public static final int RX_RNR_NAKS = 13;
    /** CNPs received (reaction point). */
    public static final int RX_CNP = 14;
    /** Duplicate requests answered: a SEND or WRITE by a re-ACK, a READ matching one served by serving it again. */
    public static final int RX_DUPLICATES = 15;
    /** Requests dropped for arriving ahead of the expected PSN. */
    public static final int RX_OUT_OF_SEQUENCE = 16;
    /** Responses dropped: stale, ahead of a gap, or not matching an outstanding request. */
    public static final int RX_RESPONSES_DROPPED = 17;
    /** Packets for a QP number this engine does not have. */
    public static final int RX_UNKNOWN_QP = 18;
    /** Packets for a QP whose state does not take them. */
    public static final int RX_INVALID_STATE = 19;
    /** Packets with an opcode the RC engine does not serve (UC, UD, atomics...). */
    public static final int RX_UNSUPPORTED_OPCODE = 20;
    /** Retransmission timeouts. */
    public static final int TIMEOUTS = 21;
    /** Payload bytes placed into registered memory. */
    public static final int BYTES_PLACED = 22;
    /** Frames that found no buffer in the sink (retried later). */
    public static final int SINK_FULL = 23;
    /** Completions refused by a full completion queue. */
    public static final int CQ_OVERRUNS = 24;
    /** Queue pairs that went to the error state. */
    public static final int QP_ERRORS = 25;
    /**
     * Duplicate requests dropped without an answer: a READ behind the expected PSN that repeats no READ recently
     * served, or a duplicate with an opcode the responder does not serve (never a fatal NAK).
     */
    public static final int RX_DUPLICATES_DROPPED = 26;
    /**
     * Operations cut short because the region they use was deregistered under them: a WRITE under way refused at
     * its next packet, READ responses not sent, local work requests completed with LOC_PROT_ERR.
     */
    public static final int REVOKED = 27;
    /**
     * Packets for a QP that came from another address than its peer's (or of another IP version): the ICRC is a
     * checksum anyone can compute, so only the address ties a packet to the connection.
     */
    public static final int RX_WRONG_SOURCE = 28;
    /** Number of slots. */
    public static final int SLOT_COUNT = 29;

    private static final String[] LABELS = {
        "rx_packets", "tx_packets", "tx_requests", "retransmitted", "tx_read_responses", "tx_acks",
        "tx_nak_sequence", "tx_nak_access", "tx_nak_invalid", "tx_rnr_nak", "tx_cnp", "rx_acks", "rx_naks",
        "rx_rnr_naks", "rx_cnp", "rx_duplicates", "rx_out_of_sequence", "rx_responses_dropped", "rx_unknown_qp",
        "rx_invalid_state", "rx_unsupported_opcode", "timeouts", "bytes_placed", "sink_full", "cq_overruns", "qp_errors",
        "rx_duplicates_dropped", "revoked", "rx_wrong_source",
    };

    private RcCounters()
    {
    }

    /**
     * @return a fresh set of counters with these slots.
     */
    public static TransportCounters create()
    {
        return new TransportCounters("RcCounters", LABELS);
    }

    /**
     * @param slot a slot.
     * @return its label.
     */
    public static String label(final int slot)
    {
        return LABELS[slot];
    }
}
