package io.spraynic.datapath.capture;

import io.spraynic.datapath.wire.ParseCounters;

/**
 * Counts from {@link FrameDecoder#decode(java.nio.file.Path, boolean, java.io.PrintStream)}.
 *
 * @param frames               frames in the file.
 * @param roce                 well-formed RoCEv2 packets.
 * @param notOurs              frames that are not RoCEv2.
 * @param malformed            malformed frames (per reason in {@code counters}).
 * @param unsupportedLinkType  frames of a link type other than Ethernet or raw IP, not parsed.
 * @param counters             the parser's counters: one slot per outcome and malformed reason.
 */
public record DecodeSummary(long frames, long roce, long notOurs, long malformed, long unsupportedLinkType,
    ParseCounters counters)
{
}
