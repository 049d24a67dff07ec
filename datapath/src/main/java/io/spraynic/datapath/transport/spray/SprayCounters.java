package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.TransportCounters;

/**
 * Event counters of the spray transport, one slot each: one instance per connection, one per path
 * and direction, one per engine (the connection-less slots). Single writer (the engine's thread),
 * plain stores; another thread may read slightly stale values. The lead maps them to the counters file.
 */
public final class SprayCounters
{
    /** Data packets sent for the first time (or moved, S7.4). */
    public static final int TX_PACKETS = 0;
    /** Payload bytes of those packets. */
    public static final int TX_BYTES = 1;
    /** Data packets received (any outcome). */
    public static final int RX_PACKETS = 2;
    /** Payload bytes placed into registered memory. */
    public static final int RX_BYTES = 3;
    /** Data packets sent again on their path with their PSN (S6.6). */
    public static final int RETRANSMITTED = 4;
    /** Data packets the sender found lost (S6.5 SACK gaps, S6.8 timeouts). */
    public static final int LOST = 5;
    /** Packets moved from a failed path to live ones (S7.4). */
    public static final int MOVED = 6;
    /** CE marks seen by the receiver (S8.1). */
    public static final int ECN_MARKS_RECEIVED = 7;
    /** CE marks echoed to the sender in ACKs (S8.1, sender side). */
    public static final int ECN_MARKS_ECHOED = 8;
    /** Gaps that appeared in a path's receive window (S6.4). */
    public static final int SACK_GAPS = 9;
    /**
     * Data packets received twice on a path (S6.3), of a message already complete, or of an attempt earlier than the
     * one its message's packets are taken from (S9.3-3).
     */
    public static final int DUPLICATES = 10;
    /** Data packets beyond a path's 256-packet window, dropped (S6.3 sackWindowOverflow). */
    public static final int OUT_OF_WINDOW = 11;
    /** NACKs sent (S9.3). */
    public static final int NACKS_SENT = 12;
    /** NACKs received. */
    public static final int NACKS_RECEIVED = 13;
    /** ACKs sent (S6.4). */
    public static final int ACKS_SENT = 14;
    /** ACKs received and applied. */
    public static final int ACKS_RECEIVED = 15;
    /** ACKs ignored: stale ({@code ackSequence}) or not fitting the window. */
    public static final int ACKS_STALE = 16;
    /** Probes sent (S6.7, S7.5). */
    public static final int PROBES_SENT = 17;
    /** Probes received. */
    public static final int PROBES_RECEIVED = 18;
    /** Retransmission timeouts (S6.8). */
    public static final int TIMEOUTS = 19;
    /** Paths that failed (S7.4). */
    public static final int PATH_FAILURES = 20;
    /** Failed paths restored by a probe (S7.5). */
    public static final int PATH_RESTORES = 21;
    /** RNR NACKs received, messages retried (S9.3). */
    public static final int RNR_RETRIES = 22;
    /** Frames that found no buffer in the output (retried later). */
    public static final int OUTPUT_FULL = 23;
    /** Packets for no known connection (S9.5 unknownConnection; engine). */
    public static final int UNKNOWN_CONNECTION = 24;
    /** Spray packets with an inconsistent header (bad path or stream, bad offset/length; engine). */
    public static final int MALFORMED = 25;
    /** Data packets dropped before the path layer for lack of message state (retried by the sender). */
    public static final int NO_RESOURCES = 26;
    /** Messages completed at the sender (CQ entries, success or error). */
    public static final int MESSAGES_SENT = 27;
    /** Messages completed at the receiver (all bytes placed). */
    public static final int MESSAGES_RECEIVED = 28;
    /** Completions refused by a full completion queue. */
    public static final int CQ_OVERRUNS = 29;
    /** Data packets of a stream that a refused message put in error, dropped unplaced (S9.4). */
    public static final int FLUSHED = 30;
    /** Paths given a new UDP source port for loss or RTT well above the connection's median (S7.3). */
    public static final int REPATHS = 31;
    /** {@code SPRAY_QUERY}s sent: a completion held while a refusal may have been missed (S9.3). */
    public static final int QUERIES_SENT = 32;
    /** {@code SPRAY_QUERY}s answered. */
    public static final int QUERIES_RECEIVED = 33;
    /** Messages whose packets were all acknowledged but whose completion waited for a refusal (S9.3). */
    public static final int COMPLETIONS_HELD = 34;
    /** {@code SPRAY_CLOSE}s sent (S9.2). */
    public static final int CLOSES_SENT = 35;
    /** {@code SPRAY_CLOSE}s received (answered with {@code SPRAY_CLOSE_ACK}). */
    public static final int CLOSES_RECEIVED = 36;
    /** Graceful closes that ended by a timeout: draining or the CLOSE_ACK took too long (S9.2). */
    public static final int CLOSE_TIMEOUTS = 37;
    /** Probes sent before new data after an idle period, so the receiver counts this sender at once (S8.3.1). */
    public static final int START_PROBES_SENT = 38;
    /** ACKs sent only because this receiver's fair-share hint for the sender changed (S8.3.2). */
    public static final int HINT_UPDATES_SENT = 39;
    /** {@code SPRAY_CONNECT_RETRY}s sent: CONNECTs without a valid cookie, answered statelessly (S9.1, S12.9; engine). */
    public static final int CONNECT_RETRIES_SENT = 40;
    /** {@code SPRAY_CONNECT_REJECT}s sent (S9.1.1; engine). */
    public static final int CONNECT_REJECTS_SENT = 41;
    /** RETRYs and REJECTs not sent for the engine's response rate limit (S12.9; engine). */
    public static final int CONNECT_RESPONSES_RATE_LIMITED = 42;
    /** CONNECTs echoing a cookie that is forged, expired or another source's (S12.9; engine). */
    public static final int COOKIE_FAILURES = 43;
    /** CONNECTs and CONNECT_ACKs whose pre-shared-key proof failed, dropped silently (S12.2; engine). */
    public static final int HANDSHAKE_AUTH_FAILURES = 44;
    /** CONNECTs refused with SOURCE_LIMIT: the source already has maxConnectionsPerSource (S12.9; engine). */
    public static final int SOURCE_LIMITED = 45;
    /** Connections closed after idleTimeout without a packet from the peer (S12.10). */
    public static final int IDLE_CLOSED = 46;
    /** Keepalives sent (S12.10). */
    public static final int KEEPALIVES_SENT = 47;
    /** CONNECTs refused with NO_LISTENER (S9.1.1; engine). */
    public static final int REFUSED_NO_LISTENER = 48;
    /** CONNECTs refused with VERSION_UNSUPPORTED (S9.1.1; engine). */
    public static final int REFUSED_VERSION = 49;
    /** CONNECTs refused with BAD_PARAMETERS (S9.1.1; engine). */
    public static final int REFUSED_BAD_PARAMETERS = 50;
    /** CONNECTs refused with NO_RESOURCES: the engine is full (S9.1.1; engine). */
    public static final int REFUSED_NO_RESOURCES = 51;
    /** CONNECTs refused with BAD_KEY: a low-order X25519 public key (S9.1.1; engine). */
    public static final int REFUSED_BAD_KEY = 52;
    /** {@code SPRAY_CONNECT_REJECT}s received for this engine's CONNECTs (S9.1; engine). */
    public static final int CONNECT_REJECTS_RECEIVED = 53;
    /**
     * Packets whose S12.3 tag (ACK, PROBE, NACK, QUERY, CLOSE, CLOSE_ACK) or S12.4 message tag (data) did not
     * verify: dropped before any state was read or changed. The S12 counters count at the connection and again in
     * the engine's totals (which also hold the CLOSEs for a closed CID whose tag failed).
     */
    public static final int AUTH_FAILURES = 54;
    /** Packets from an address that is not the peer's on the plane they came on (S12.5): dropped unread. */
    public static final int ADDRESS_MISMATCHES = 55;
    /** Authenticated RESYNC probes refused: behind what the path received, or 2^23 or more ahead (S12.6). */
    public static final int RESYNCS_REFUSED = 56;
    /** First packets of messages outside the stream's MSN window (S12.7): dropped before the path layer. */
    public static final int MSN_OUT_OF_WINDOW = 57;
    /** Authenticated NACKs naming a message this end never sent (S12.8): dropped. */
    public static final int NACKS_UNMATCHED = 58;
    /** Well-formed RoCEv2 packets whose opcode is not a spray one (an RC/UC/UD packet): dropped, engine (S9.5). */
    public static final int NOT_SPRAY = 59;
    /**
     * Retransmission timeouts found spurious (S6.8.1): a packet a timeout gave up on was acknowledged on its first
     * transmission after all; each widens the path's late margin.
     */
    public static final int SPURIOUS_TIMEOUTS = 60;
    /**
     * Of {@link #SPURIOUS_TIMEOUTS}, those the receiver's report of duplicates showed (S6.8-1 (c)): the packet a timeout
     * sent again arrived after its earlier transmission, where neither (a) nor (b) could tell.
     */
    public static final int SPURIOUS_TIMEOUTS_REPORTED = 61;
    /**
     * Data packets flagged {@code RETRANSMIT} that the receiver's path layer took as new: retransmissions at their PSN
     * (S6.6) of packets it had not received, and the copies a timeout re-sent on another path (S7.4.1). Receiver side:
     * when a lost packet's copy was delivered (issue 14: a recovery measured to the copies' delivery, not estimated).
     */
    public static final int RX_RETRANSMITTED = 62;
    /**
     * Messages that named a receive (stream, RSN) another message of the peer's had already consumed (S4.5 gives each
     * RSN one message): retired without completing it again, nor freeing it twice. The engine's, as malformed
     * packets are (a connection's idle memory stays as it was).
     */
    public static final int RECEIVES_CLAIMED_TWICE = 63;
    /** Number of slots. */
    public static final int SLOT_COUNT = 64;

    private static final String[] LABELS = {
        "tx_packets", "tx_bytes", "rx_packets", "rx_bytes", "retransmitted", "lost", "moved",
        "ecn_marks_received", "ecn_marks_echoed", "sack_gaps", "duplicates", "out_of_window", "nacks_sent",
        "nacks_received", "acks_sent", "acks_received", "acks_stale", "probes_sent", "probes_received",
        "timeouts", "path_failures", "path_restores", "rnr_retries", "output_full", "unknown_connection",
        "malformed", "no_resources", "messages_sent", "messages_received", "cq_overruns", "flushed",
        "repaths", "queries_sent", "queries_received", "completions_held", "closes_sent", "closes_received",
        "close_timeouts", "start_probes_sent", "hint_updates_sent", "connect_retries_sent", "connect_rejects_sent",
        "connect_responses_rate_limited", "cookie_failures", "handshake_auth_failures", "source_limited", "idle_closed",
        "keepalives_sent", "refused_no_listener", "refused_version", "refused_bad_parameters", "refused_no_resources",
        "refused_bad_key", "connect_rejects_received", "auth_failures", "address_mismatches", "resyncs_refused",
        "msn_out_of_window", "nacks_unmatched", "not_spray", "spurious_timeouts", "spurious_timeouts_reported",
        "rx_retransmitted", "receives_claimed_twice",
    };

    private SprayCounters()
    {
    }

    /**
     * @return the slots a connection's counters can move (the handshake's slots, 40..53, are the engine's, except
     * {@link #IDLE_CLOSED}, {@link #KEEPALIVES_SENT}, {@link #SPURIOUS_TIMEOUTS}, {@link #SPURIOUS_TIMEOUTS_REPORTED}
     * and {@link #RX_RETRANSMITTED}): what is worth mirroring per connection.
     */
    public static int[] connectionSlots()
    {
        final int[] slots = new int[CONNECT_RETRIES_SENT + 5];
        for (int i = 0; i < CONNECT_RETRIES_SENT; i++)
        {
            slots[i] = i;
        }
        slots[CONNECT_RETRIES_SENT] = IDLE_CLOSED;
        slots[CONNECT_RETRIES_SENT + 1] = KEEPALIVES_SENT;
        slots[CONNECT_RETRIES_SENT + 2] = SPURIOUS_TIMEOUTS;
        slots[CONNECT_RETRIES_SENT + 3] = SPURIOUS_TIMEOUTS_REPORTED;
        slots[CONNECT_RETRIES_SENT + 4] = RX_RETRANSMITTED;
        return slots;
    }

    /**
     * @return a fresh set of counters with these slots.
     */
    public static TransportCounters create()
    {
        return new TransportCounters("SprayCounters", LABELS);
    }

    /**
     * The events a spray connection counts per path as well as in all (the others are counted only for the whole
     * connection): keeping only these makes a path's set 19 slots instead of {@value #SLOT_COUNT}, which an idle
     * connection's memory feels (issue 13). {@code SprayConnectionMemoryTest} checks that the sources count no other
     * slot on a path.
     */
    static final int[] PATH_SLOTS = {
        TX_PACKETS, TX_BYTES, RX_PACKETS, RX_BYTES, RETRANSMITTED, LOST, TIMEOUTS, PATH_FAILURES, PATH_RESTORES,
        REPATHS, PROBES_SENT, ACKS_SENT, ACKS_RECEIVED, ECN_MARKS_ECHOED, ECN_MARKS_RECEIVED, DUPLICATES,
        OUT_OF_WINDOW, SACK_GAPS, MOVED,
    };
    private static final int[] PATH_POSITIONS = TransportCounters.positions(SLOT_COUNT, PATH_SLOTS);

    /**
     * @return a fresh set of one path's counters: {@link #PATH_SLOTS} kept, the other slots reading 0.
     */
    public static TransportCounters createForPath()
    {
        return new TransportCounters("SprayCounters", LABELS, PATH_POSITIONS);
    }

    /**
     * The events only an engine counts (a packet for no connection, malformed ones, the handshake's, and packets of
     * another transport): a connection's totals keep every other slot, {@link #CONNECTION_SLOTS} (issue 13: 47 longs
     * instead of {@value #SLOT_COUNT} in every idle connection). {@code SprayConnectionMemoryTest} checks that the
     * sources count none of these on a connection.
     */
    static final int[] ENGINE_ONLY_SLOTS = {
        UNKNOWN_CONNECTION, MALFORMED, CONNECT_RETRIES_SENT, CONNECT_REJECTS_SENT, CONNECT_RESPONSES_RATE_LIMITED,
        COOKIE_FAILURES, HANDSHAKE_AUTH_FAILURES, SOURCE_LIMITED, REFUSED_NO_LISTENER, REFUSED_VERSION,
        REFUSED_BAD_PARAMETERS, REFUSED_NO_RESOURCES, REFUSED_BAD_KEY, CONNECT_REJECTS_RECEIVED, NOT_SPRAY,
        RECEIVES_CLAIMED_TWICE,
    };
    /** The slots a connection's totals keep: all but {@link #ENGINE_ONLY_SLOTS}, in slot order. */
    static final int[] CONNECTION_SLOTS = allBut(ENGINE_ONLY_SLOTS);
    private static final int[] CONNECTION_POSITIONS = TransportCounters.positions(SLOT_COUNT, CONNECTION_SLOTS);

    private static int[] allBut(final int[] left)
    {
        final int[] kept = new int[SLOT_COUNT - left.length];
        int count = 0;
        for (int slot = 0; slot < SLOT_COUNT; slot++)
        {
            boolean isLeft = false;
            for (final int other : left)
            {
                isLeft |= other == slot;
            }
            if (!isLeft)
            {
                kept[count++] = slot;
            }
        }
        return kept;
    }

    /**
     * @return a fresh set of a connection's totals: {@link #CONNECTION_SLOTS} kept, the engine's slots reading 0.
     */
    public static TransportCounters createForConnection()
    {
        return new TransportCounters("SprayCounters", LABELS, CONNECTION_POSITIONS);
    }

    /**
     * @param slot a slot.
     * @return its label.
     */
    public static String label(final int slot)
    {
        return LABELS[slot];
    }

    /** @return bytes one connection's totals hold (S10.1 reporting). */
    static int stateBytes()
    {
        return TransportCounters.stateBytes(CONNECTION_SLOTS.length + 1);
    }

    /** @return bytes one path's set holds (S10.1 reporting). */
    static int pathStateBytes()
    {
        return TransportCounters.stateBytes(PATH_SLOTS.length + 1);
    }
}
