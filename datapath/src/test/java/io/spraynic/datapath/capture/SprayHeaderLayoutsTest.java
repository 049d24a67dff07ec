package io.spraynic.datapath.capture;

import io.spraynic.datapath.wire.ConnectionHeader;
import io.spraynic.datapath.wire.HandshakeBlock;
import io.spraynic.datapath.wire.ImmediateDataHeader;
import io.spraynic.datapath.wire.NegativeAckHeader;
import io.spraynic.datapath.wire.PlaneAddress;
import io.spraynic.datapath.wire.ProbeHeader;
import io.spraynic.datapath.wire.RdmaExtendedTransportHeader;
import io.spraynic.datapath.wire.SelectiveAckHeader;
import io.spraynic.datapath.wire.SprayExtendedTransportHeader;
import io.spraynic.datapath.wire.SprayOpcodes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/PROTOCOL.md's byte-offset tables (S2.5, S3.1, S3.3, S4.1, S5.1-S5.6) are the one list of spray header
 * fields: the layouts {@code spraynic decode} prints match them row for row, every offset constant of a wire
 * flyweight starts a row of its table, every field of a table has a flyweight constant, and the opcode table
 * names every spray opcode with the header length the parser expects. The scapy and Lua decoders of
 * tools/decoders are held to the same tables by {@code SpraySpecDecodersTest}.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class SprayHeaderLayoutsTest
{
    private static final Pattern MARKER = Pattern.compile("^\\s*<!-- layout: (\\w+) -->\\s*$");

    private static final Map<SprayHeaderLayouts.Layout, Class<?>> FLYWEIGHTS = Map.of(
        SprayHeaderLayouts.SETH, SprayExtendedTransportHeader.class,
        SprayHeaderLayouts.RETH, RdmaExtendedTransportHeader.class,
        SprayHeaderLayouts.IMMDT, ImmediateDataHeader.class,
        SprayHeaderLayouts.SACKH, SelectiveAckHeader.class,
        SprayHeaderLayouts.PRBH, ProbeHeader.class,
        SprayHeaderLayouts.NAKH, NegativeAckHeader.class,
        SprayHeaderLayouts.CONH, ConnectionHeader.class,
        SprayHeaderLayouts.HSB, HandshakeBlock.class,
        SprayHeaderLayouts.ADDRESS, PlaneAddress.class);

    /** @return each marked table of PROTOCOL.md: its rows' cells, without the backquotes. */
    static Map<String, List<String[]>> tables() throws Exception
    {
        final List<String> lines = Files.readAllLines(Path.of("..", "docs", "PROTOCOL.md"), StandardCharsets.UTF_8);
        final Map<String, List<String[]>> tables = new LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++)
        {
            final Matcher marker = MARKER.matcher(lines.get(i));
            if (!marker.matches())
            {
                continue;
            }
            final List<String[]> rows = new ArrayList<>();
            for (int j = i + 3; j < lines.size() && lines.get(j).strip().startsWith("|"); j++)
            {
                final String row = lines.get(j).strip();
                final String[] cells = row.substring(1, row.length() - 1).split("\\|");
                for (int c = 0; c < cells.length; c++)
                {
                    cells[c] = cells[c].strip().replace("`", "");
                }
                rows.add(cells);
            }
            tables.put(marker.group(1), rows);
        }
        return tables;
    }

    @Test
    void shouldDecodeExactlyTheFieldsOfTheSpecTables() throws Exception
    {
        final Map<String, List<String[]>> tables = tables();
        for (final SprayHeaderLayouts.Layout layout : SprayHeaderLayouts.ALL)
        {
            final List<String[]> rows = tables.get(layout.name());
            assertTrue(null != rows, "PROTOCOL.md has a table marked <!-- layout: " + layout.name() + " -->");
            final List<String> spec = new ArrayList<>();
            int length = 0;
            for (final String[] row : rows)
            {
                spec.add(row[0] + " " + row[1] + " " + row[2] + " " + row[3]);
                length += Integer.parseInt(row[1]);
            }
            final List<String> decoded = layout.fields().stream()
                .map(f -> f.offset() + " " + f.size() + " " + f.name() + " " + f.type().name().toLowerCase(Locale.ROOT))
                .toList();
            assertEquals(spec, decoded, layout.name());
            assertEquals(length, layout.length(), layout.name() + " length");
        }
        assertEquals(SprayHeaderLayouts.ALL.size() + 1, tables.size(), "a table per layout, and the opcodes: " + tables.keySet());
    }

    @Test
    void shouldHaveARowForEveryFlyweightOffsetAndAFlyweightOffsetForEveryField() throws Exception
    {
        for (final Map.Entry<SprayHeaderLayouts.Layout, Class<?>> entry : FLYWEIGHTS.entrySet())
        {
            final SprayHeaderLayouts.Layout layout = entry.getKey();
            final Map<Integer, SprayHeaderLayouts.Field> byOffset = new LinkedHashMap<>();
            layout.fields().forEach(f -> byOffset.put(f.offset(), f));
            final Map<String, Integer> constants = new LinkedHashMap<>();
            for (final Field constant : entry.getValue().getFields())
            {
                if (Modifier.isStatic(constant.getModifiers()) && constant.getType() == int.class)
                {
                    constants.put(constant.getName(), constant.getInt(null));
                }
            }
            assertEquals(layout.length(), constants.get("LENGTH"), entry.getValue().getSimpleName() + ".LENGTH");
            for (final Map.Entry<String, Integer> constant : constants.entrySet())
            {
                final String name = constant.getKey();
                if (name.endsWith("_OFFSET"))
                {
                    final SprayHeaderLayouts.Field row = byOffset.get(constant.getValue());
                    assertTrue(null != row, entry.getValue().getSimpleName() + "." + name + " = " + constant.getValue() +
                        " starts no row of the table " + layout.name());
                    final Integer size = constants.get(name.replace("_OFFSET", "_LENGTH"));
                    if (null != size)
                    {
                        assertEquals(size, row.size(), entry.getValue().getSimpleName() + "." + name + "'s length");
                    }
                }
            }
            for (final SprayHeaderLayouts.Field field : layout.fields())
            {
                if (field.name().startsWith("reserved"))
                {
                    continue;
                }
                // a 24-bit field is read as the low three bytes of the 32-bit word its constant names (S2.5)
                final int word = field.type() == SprayHeaderLayouts.Type.U24 ? field.offset() - 1 : field.offset();
                assertTrue(constants.entrySet().stream().anyMatch(c -> c.getKey().endsWith("_OFFSET") && c.getValue() == word),
                    layout.name() + "." + field.name() + " at " + field.offset() + " has no offset constant in " +
                    entry.getValue().getSimpleName() + ": " + constants);
            }
        }
    }

    @Test
    void shouldNameEveryOpcodeWithTheHeaderLengthTheParserExpects() throws Exception
    {
        final List<String[]> rows = tables().get("opcodes");
        assertEquals(16, rows.size());
        int opcode = SprayOpcodes.WRITE;
        for (final String[] row : rows)
        {
            assertEquals(opcode, Integer.decode(row[0]), "opcodes in order");
            assertEquals(SprayOpcodes.name(opcode), row[1]);
            assertEquals(SprayOpcodes.TABLE.extensionHeadersLength(opcode), Integer.parseInt(row[3]), row[1]);
            final int fromLayouts = SprayHeaderLayouts.headersAfterBth(opcode).stream().mapToInt(SprayHeaderLayouts.Layout::length).sum();
            assertEquals(fromLayouts, Integer.parseInt(row[3]), row[1] + " headers " + row[2]);
            assertEquals(row[2], String.join(", ", SprayHeaderLayouts.headersAfterBth(opcode).stream()
                .map(l -> l == SprayHeaderLayouts.IMMDT ? "ImmDt" : l.name().toUpperCase(Locale.ROOT)).toList()), row[1]);
            opcode++;
        }
        assertFalse(null != SprayOpcodes.name(opcode), "no opcode after " + Integer.toHexString(opcode - 1));
    }
}
