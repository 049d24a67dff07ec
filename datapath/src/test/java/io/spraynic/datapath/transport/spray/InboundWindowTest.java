package io.spraynic.datapath.transport.spray;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/PROTOCOL.md S10.2: messages are placed only inside the advertised window; a small reserve beyond it holds
 * the refusals of messages there was no room for, and a reserve record joins the window when its retry has room.
 */
@Timeout(10)
class InboundWindowTest
{
    @Test
    void shouldKeepAnEighthInReserveAtLeastOneFromTwoRecords()
    {
        assertEquals(0, InboundWindow.reserveFor(1));
        assertEquals(1, InboundWindow.reserveFor(2));
        assertEquals(1, InboundWindow.reserveFor(15));
        assertEquals(2, InboundWindow.reserveFor(16));
        assertEquals(128, InboundWindow.reserveFor(1024));
        assertEquals(896, InboundWindow.windowFor(1024));
        assertEquals(1, InboundWindow.windowFor(1));
        final InboundWindow window = new InboundWindow(16);
        assertEquals(14, window.window);
        assertEquals(2, window.reserve);
    }

    @Test
    void shouldRefuseFromTheReserveOnlyOnceTheWindowIsFull()
    {
        final InboundWindow window = new InboundWindow(4); // window 3, reserve 1
        for (int i = 0; i < 3; i++)
        {
            assertTrue(window.hasRoom());
            window.take(false);
        }
        assertFalse(window.hasRoom());
        assertTrue(window.hasRoomToRefuse(), "the reserve record");
        window.take(true);
        assertFalse(window.hasRoomToRefuse(), "neither window nor reserve");
        assertEquals(3, window.windowInUse());
        assertEquals(1, window.reserveInUse());

        window.release(false);
        assertTrue(window.hasRoom());
        window.joinWindow(); // the refused message's retry found room: its reserve record joins the window
        assertEquals(3, window.windowInUse());
        assertEquals(0, window.reserveInUse());
        assertFalse(window.hasRoom());
        assertTrue(window.hasRoomToRefuse(), "the reserve is free again");

        window.release(false);
        window.release(false);
        window.release(false);
        assertEquals(0, window.windowInUse());
    }
}
