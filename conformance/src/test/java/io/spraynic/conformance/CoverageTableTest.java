package io.spraynic.conformance;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The coverage table of docs/PROTOCOL.md (S13.3) is true: every RFC 2119 MUST or SHOULD of the text lies in a clause
 * with an identifier; every identifier has one row, at the level of its rule; a row names checks the suite has
 * ({@link CheckCatalog}), or says "none" and why; and every check the suite has is listed in the row of the clause it
 * cites. Text only, no network.
 */
class CoverageTableTest
{
    private static final Pattern MARKER = Pattern.compile("\\*\\*\\[(S[0-9.]+-[0-9]+)\\]");
    private static final Pattern KEYWORD = Pattern.compile("\\b(MUST|SHOULD)\\b");
    private static final Pattern CHECK_ID = Pattern.compile("`([a-z]+\\.[a-z0-9-]+)`");
    /** Where a row without a check must say why, at least this much. */
    private static final int MIN_REASON = 20;

    private static String protocol() throws IOException
    {
        return Files.readString(Path.of("..", "docs", "PROTOCOL.md"));
    }

    @Test
    void everyRequirementHasAnIdentifiedClauseAndARowAtItsLevel() throws IOException
    {
        final String text = protocol();
        final Map<String, String> levels = clauseLevels(text);
        final Map<String, String[]> rows = rows(text);
        assertEquals(levels.keySet(), rows.keySet(), "a coverage row per clause identifier PROTOCOL.md defines");
        final List<String> wrong = new ArrayList<>();
        for (final Map.Entry<String, String> e : levels.entrySet())
        {
            if (!e.getValue().equals(rows.get(e.getKey())[0]))
            {
                wrong.add(e.getKey() + " is a " + e.getValue() + " in the text, " + rows.get(e.getKey())[0] +
                    " in the table");
            }
        }
        assertEquals(List.of(), wrong);
        assertEquals(List.of(), unidentified(text), "MUST or SHOULD outside any identified clause");
    }

    @Test
    void everyRowNamesTheSuitesChecksOrSaysWhyNone() throws IOException
    {
        final Map<String, String[]> rows = rows(protocol());
        final Map<String, CheckCatalog.Entry> catalogue = CheckCatalog.entries();
        final List<String> wrong = new ArrayList<>();
        for (final Map.Entry<String, String[]> row : rows.entrySet())
        {
            final String cell = row.getValue()[1];
            int named = 0;
            final Matcher id = CHECK_ID.matcher(cell);
            while (id.find())
            {
                if (catalogue.containsKey(id.group(1)))
                {
                    named++;
                }
                else
                {
                    wrong.add(row.getKey() + " names `" + id.group(1) + "`, which the suite does not have");
                }
            }
            if (cell.startsWith("none"))
            {
                if (cell.length() < "none".length() + MIN_REASON)
                {
                    wrong.add(row.getKey() + " has no check and gives no reason: " + cell);
                }
            }
            else if (named == 0)
            {
                wrong.add(row.getKey() + " names no check of the suite and does not say none: " + cell);
            }
        }
        for (final CheckCatalog.Entry check : catalogue.values())
        {
            final String[] row = rows.get(check.clause());
            if (null == row)
            {
                wrong.add(check.id() + " cites " + check.clause() + ", which PROTOCOL.md does not define");
            }
            else
            {
                if (!row[1].contains("`" + check.id() + "`"))
                {
                    wrong.add("the row of " + check.clause() + " does not list " + check.id());
                }
                if (!row[0].equals(check.level()))
                {
                    wrong.add(check.id() + " reports " + check.level() + " for " + check.clause() + ", a " + row[0]);
                }
            }
        }
        assertEquals(List.of(), wrong);
    }

    /**
     * The MUST clauses no check of the suite covers, each with its reason in its row (S13.3): the late margin a
     * sender learns (S6.8-2), what a peer does not assume (S6.8-5) and a region deregistered mid-response.
     * The audit of issue 15
     * ("every MUST covered"): a MUST whose row loses its check, or a new MUST without one, fails here until it is
     * added to this list on purpose.
     */
    static final java.util.Set<String> MUSTS_WITHOUT_CHECK = java.util.Set.of("S6.8-5");

    @Test
    void everyMustHasACheckButThoseListedAsUncheckable() throws IOException
    {
        assertEquals(new java.util.TreeSet<>(MUSTS_WITHOUT_CHECK), mustsWithoutCheck(protocol()));
    }

    /** The audit fails when a MUST's row stops naming its check (here S9.3.1-2's, errors.query). */
    @Test
    void shouldFindAMustThatLostItsCheck() throws IOException
    {
        final String text = protocol().replaceFirst("\\| S9\\.3\\.1-2 \\| MUST \\| `errors\\.query`[^\n]*\\|\n",
            "| S9.3.1-2 | MUST | none: a row that lost its check, with a reason long enough |\n");
        assertNotEquals(protocol(), text, "the row was replaced");
        final java.util.Set<String> expected = new java.util.TreeSet<>(MUSTS_WITHOUT_CHECK);
        expected.add("S9.3.1-2");
        assertEquals(expected, mustsWithoutCheck(text));
    }

    /** @return the MUST rows of the coverage table that name no check ("none" and why). */
    static java.util.Set<String> mustsWithoutCheck(final String text)
    {
        final java.util.Set<String> without = new java.util.TreeSet<>();
        for (final Map.Entry<String, String[]> row : rows(text).entrySet())
        {
            if ("MUST".equals(row.getValue()[0]) && row.getValue()[1].startsWith("none"))
            {
                without.add(row.getKey());
            }
        }
        return without;
    }

    @Test
    void shouldRefuseACheckOutsideTheCatalogue()
    {
        CheckCatalog.require("data.probe", "S5.2-1", "MUST");
        assertThrows(IllegalStateException.class, () -> CheckCatalog.require("data.probe", "S5.2-2", "MUST"));
        assertThrows(IllegalStateException.class, () -> CheckCatalog.require("data.probe", "S5.2-1", "SHOULD"));
        assertThrows(IllegalStateException.class, () -> CheckCatalog.require("data.nothing", "S5.2-1", "MUST"));
    }

    /** The parser finds what it must: a MUST outside a clause, and a clause's level from its first keyword. */
    @Test
    void shouldFindUnidentifiedRequirements()
    {
        final String text = "- **S1.1** A sender MUST do it.\n- **S1.2** **[S1.2-1]** A receiver SHOULD do that; it " +
            "MUST then do more.\n  - *Note* it must not (lower case: no rule).\n- **S13.1 The suite** MUST run.\n";
        assertEquals(List.of("S1.1: MUST in \"- **S1.1** A sender MUST\""), unidentified(text));
        assertEquals(Map.of("S1.2-1", "SHOULD"), clauseLevels(text));
    }

    /** @return each identifier the text defines (before S13) with the level of its rule: the first keyword after it. */
    static Map<String, String> clauseLevels(final String text)
    {
        final String normative = normative(text);
        final Map<String, String> levels = new TreeMap<>();
        final Matcher marker = MARKER.matcher(normative);
        while (marker.find())
        {
            final Matcher keyword = KEYWORD.matcher(normative);
            levels.put(marker.group(1), keyword.find(marker.end()) ? keyword.group(1) : "none");
        }
        return levels;
    }

    /**
     * @return each MUST or SHOULD before S13 (S0.1, which defines the words, aside) that no identifier precedes in
     * its list item: "clause: keyword in item".
     */
    static List<String> unidentified(final String text)
    {
        final List<String> found = new ArrayList<>();
        String clause = "";
        final StringBuilder item = new StringBuilder();
        for (final String line : (normative(text) + "\n- end").split("\n"))
        {
            final String trimmed = line.trim();
            if (trimmed.startsWith("- ") || trimmed.startsWith("#") || trimmed.isEmpty() || trimmed.startsWith("|"))
            {
                judge(item.toString(), clause, found);
                item.setLength(0);
                final Matcher number = Pattern.compile("^- \\*\\*(S[0-9.]+)").matcher(trimmed);
                if (number.find())
                {
                    clause = number.group(1);
                }
            }
            item.append(trimmed).append(' ');
            if (trimmed.startsWith("|"))
            {
                judge(item.toString(), clause, found);
                item.setLength(0);
            }
        }
        return found;
    }

    private static void judge(final String item, final String clause, final List<String> found)
    {
        if (clause.equals("S0.1"))
        {
            return;
        }
        final Matcher keyword = KEYWORD.matcher(item);
        final Matcher marker = MARKER.matcher(item);
        final int firstMarker = marker.find() ? marker.start() : Integer.MAX_VALUE;
        if (keyword.find() && keyword.start() < firstMarker)
        {
            // the words before the keyword (enough to find it), not the whole paragraph
            final String before = item.substring(Math.max(0, keyword.start() - 60), keyword.end());
            found.add(clause + ": " + keyword.group(1) + " in \"" + before.trim() + "\"");
        }
    }

    /** @return the text before S13 (the suite's own section, which quotes identifiers but defines none). */
    private static String normative(final String text)
    {
        final int suite = text.indexOf("- **S13.1");
        return suite < 0 ? text : text.substring(0, suite);
    }

    /** @return the coverage table's rows: clause to {level, checks cell}. */
    static Map<String, String[]> rows(final String text)
    {
        final Map<String, String[]> rows = new TreeMap<>();
        final String coverage = text.substring(text.indexOf("**S13.3 Coverage**"));
        for (final String line : coverage.split("\n"))
        {
            final String[] cells = line.trim().split("\\|");
            if (cells.length > 3 && cells[1].trim().startsWith("S"))
            {
                for (final String clause : cells[1].trim().split(",\\s*"))
                {
                    rows.put(clause, new String[]{cells[2].trim(), cells[3].trim()});
                }
            }
        }
        assertTrue(!rows.isEmpty(), "no coverage table found");
        return rows;
    }
}
