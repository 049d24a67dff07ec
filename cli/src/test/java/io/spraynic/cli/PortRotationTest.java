package io.spraynic.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code --port-rotation}: what it accepts, parsed once; the refusals and their sentences are in BadArgumentsTest. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class PortRotationTest
{
    @Test
    void shouldAcceptOffAndRangesUpToTheLimit()
    {
        assertSame(PortRotation.OFF, PortRotation.parse("off"));
        assertEquals(new PortRotation(16, 32), PortRotation.parse("16-32"));
        assertEquals(new PortRotation(1, 1), PortRotation.parse("1-1"));
        assertEquals(new PortRotation(65_536, 65_536), PortRotation.parse("65536-65536"));
        assertEquals(new PortRotation(7, 9), PortRotation.parse("007-0009"), "leading zeros are still the number");
    }

    @Test
    void shouldRefuseEverythingElseSayingWhatIsAllowed()
    {
        for (final String hostile : List.of("", " ", "off ", "OFF", "abc", "5-1", "0-10", "0-0", "1-65537", "1-70000", "-5",
            "1-", "-1", "+1-+2", "1--2", "1-2-3", "2147483648-2147483649", "999999-9999999", "1.5-2", "0x10-0x20", "\u0661-\u0662"))
        {
            final IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> PortRotation.parse(hostile), hostile);
            assertEquals(PortRotation.ALLOWED, refused.getMessage(), hostile);
        }
    }

    @Test
    void shouldReachBothCommandsParsedAndDefaultTo16To32()
    {
        assertEquals(new PortRotation(16, 32), parsed(NicCommand.class, "nic", "--config", "net_null").portRotation);
        assertSame(PortRotation.OFF, parsed(NicCommand.class, "nic", "--config", "net_null", "--port-rotation", "off")
            .portRotation);
        final TransferCommand transfer = parsed(TransferCommand.class, "transfer", "--ip", "10.0.0.1", "--exchange", "/x",
            "--port-rotation", "2-4");
        assertEquals(new PortRotation(2, 4), transfer.portRotation);
    }

    private static <T> T parsed(final Class<T> type, final String... args)
    {
        final CommandLine.ParseResult result = NumberConverters.register(new CommandLine(new SprayNic())).parseArgs(args);
        assertTrue(result.hasSubcommand(), List.of(args).toString());
        return type.cast(result.subcommand().commandSpec().userObject());
    }
}
