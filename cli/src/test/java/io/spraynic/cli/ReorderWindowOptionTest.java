package io.spraynic.cli;

import io.spraynic.datapath.transport.spray.SprayConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code --reorder-window}: what it accepts, parsed once; the refusals' sentences are in BadArgumentsTest. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ReorderWindowOptionTest
{
    @Test
    void shouldAcceptOffAFixedWindowAndALearntOne()
    {
        assertSame(ReorderWindowOption.OFF, ReorderWindowOption.parse("off"));
        assertEquals(new ReorderWindowOption(0, 0), ReorderWindowOption.parse("0"), "0: a gap is loss, as off");
        assertEquals(new ReorderWindowOption(50, 50), ReorderWindowOption.parse("50"));
        assertEquals(new ReorderWindowOption(0, 2_000), ReorderWindowOption.parse("0-2000"));
        assertEquals(new ReorderWindowOption(10, 1_000_000), ReorderWindowOption.parse("010-1000000"));
        assertEquals(new ReorderWindowOption(1_000_000, 1_000_000), ReorderWindowOption.parse("1000000"));
    }

    @Test
    void shouldRefuseEverythingElseSayingWhatIsAllowed()
    {
        for (final String hostile : List.of("", " ", "off ", "OFF", "on", "5-1", "7-7", "0-1000001", "1000001", "-5", "1-",
            "-1", "+1", "1--2", "1-2-3", "99999999-99999999", "1.5", "10us", "0x10", "\u0661"))
        {
            final IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> ReorderWindowOption.parse(hostile), hostile);
            assertEquals(ReorderWindowOption.ALLOWED, refused.getMessage(), hostile);
        }
    }

    @Test
    void shouldSetTheSprayConfigurationInNanoseconds()
    {
        final SprayConfig config = ReorderWindowOption.parse("20-500").applyTo(new SprayConfig());
        assertEquals("20000 500000", config.reorderWindowNanos() + " " + config.reorderWindowMaxNanos());
    }

    @Test
    void shouldReachBothCommandsParsedAndDefaultToOff()
    {
        assertSame(ReorderWindowOption.OFF, parsed(NicCommand.class, "nic", "--config", "net_null").reorderWindow);
        assertEquals(new ReorderWindowOption(0, 200), parsed(NicCommand.class, "nic", "--config", "net_null",
            "--reorder-window", "0-200").reorderWindow);
        final TransferCommand transfer = parsed(TransferCommand.class, "transfer", "--ip", "10.0.0.1", "--exchange", "/x",
            "--reorder-window", "30");
        assertEquals(new ReorderWindowOption(30, 30), transfer.reorderWindow);
    }

    private static <T> T parsed(final Class<T> type, final String... args)
    {
        final CommandLine.ParseResult result = NumberConverters.register(new CommandLine(new SprayNic())).parseArgs(args);
        assertTrue(result.hasSubcommand(), List.of(args).toString());
        return type.cast(result.subcommand().commandSpec().userObject());
    }
}
