package io.spraynic.datapath.wire;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class TsharkTest
{
    private static final String TRACEROUTE = "Expert Info (Chat/Sequence): Possible traceroute: hop #6, attempt #3";
    private static final String BAD_CHECKSUM = "Expert Info (Error/Checksum): Bad checksum [should be 0x1234]";

    @Test
    void shouldDropOnlyTheTracerouteGuessAboutAPortNumber()
    {
        assertEquals("", Tshark.withoutTracerouteGuess(TRACEROUTE));
        assertEquals("", Tshark.withoutTracerouteGuess(TRACEROUTE + ";" + TRACEROUTE));
        assertEquals(BAD_CHECKSUM, Tshark.withoutTracerouteGuess(TRACEROUTE + ";" + BAD_CHECKSUM));
        assertEquals(BAD_CHECKSUM, Tshark.withoutTracerouteGuess(BAD_CHECKSUM + ";" + TRACEROUTE));
        assertEquals(BAD_CHECKSUM + ";" + BAD_CHECKSUM,
            Tshark.withoutTracerouteGuess(BAD_CHECKSUM + ";" + TRACEROUTE + ";" + BAD_CHECKSUM));
        assertEquals("", Tshark.withoutTracerouteGuess(""));
    }
}
