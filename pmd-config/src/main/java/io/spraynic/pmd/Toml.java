package io.spraynic.pmd;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * Writes values the way they appear in a TOML file, for error messages and for {@link NicConfig#toToml()}.
 */
final class Toml
{
    private Toml()
    {
    }

    /**
     * @param value a string.
     * @return the value as a TOML basic string, quoted and escaped.
     */
    static String quote(final String value)
    {
        final StringBuilder sb = new StringBuilder(value.length() + 2).append('"');
        for (int i = 0; i < value.length(); i++)
        {
            final char c = value.charAt(i);
            switch (c)
            {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default ->
                {
                    if (c < 0x20 || c == 0x7f)
                    {
                        sb.append(String.format("\\u%04x", (int)c));
                    }
                    else
                    {
                        sb.append(c);
                    }
                }
            }
        }

        return sb.append('"').toString();
    }

    /**
     * @param value a String, Number, Boolean or Collection of them.
     * @return the value as a TOML literal.
     */
    static String literal(final Object value)
    {
        return switch (value)
        {
            case String s -> quote(s);
            case Collection<?> c ->
            {
                final StringBuilder sb = new StringBuilder("[");
                final Iterator<?> it = c.iterator();
                while (it.hasNext())
                {
                    sb.append(literal(it.next()));
                    if (it.hasNext())
                    {
                        sb.append(", ");
                    }
                }
                yield sb.append(']').toString();
            }
            default -> String.valueOf(value);
        };
    }

    /**
     * @param node a node read from a TOML document.
     * @return the node written back as a TOML literal (tables as inline tables).
     */
    static String literal(final JsonNode node)
    {
        if (node == null || node.isMissingNode())
        {
            return ConfigException.MISSING;
        }
        if (node.isTextual())
        {
            return quote(node.textValue());
        }
        if (node.isArray())
        {
            final StringBuilder sb = new StringBuilder("[");
            for (int i = 0; i < node.size(); i++)
            {
                sb.append(i == 0 ? "" : ", ").append(literal(node.get(i)));
            }
            return sb.append(']').toString();
        }
        if (node.isObject())
        {
            final StringBuilder sb = new StringBuilder("{");
            boolean first = true;
            for (final Map.Entry<String, JsonNode> field : node.properties())
            {
                sb.append(first ? " " : ", ").append(key(field.getKey())).append(" = ").append(literal(field.getValue()));
                first = false;
            }
            return sb.append(first ? "}" : " }").toString();
        }

        if (node.isFloatingPointNumber())
        {
            // TOML floats always have a fraction or exponent; BigDecimal would print 1500.0 as 1.5E+3.
            final double d = node.doubleValue();
            if (!Double.isFinite(d))
            {
                return Double.isNaN(d) ? "nan" : d > 0 ? "inf" : "-inf";
            }
            final String plain = node.decimalValue().toPlainString();
            return plain.contains(".") ? plain : plain + ".0";
        }

        return node.asText();
    }

    /**
     * @param key a table key.
     * @return the key bare when TOML allows it, quoted otherwise.
     */
    static String key(final String key)
    {
        return !key.isEmpty() && key.chars().allMatch(c -> Character.isLetterOrDigit(c) && c < 0x80 || c == '_' || c == '-') ?
            key : quote(key);
    }

    /**
     * The closest candidate to a misspelt name, for "did you mean" hints.
     *
     * @param name       what was written.
     * @param candidates what is allowed.
     * @return the candidate within a small edit distance, or null when nothing is close.
     */
    static String closest(final String name, final List<String> candidates)
    {
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (final String candidate : candidates)
        {
            final int distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
            if (distance < bestDistance)
            {
                best = candidate;
                bestDistance = distance;
            }
        }

        if (bestDistance <= Math.max(2, name.length() / 3))
        {
            return best;
        }

        // A shortened or lengthened name (no_hugepages for no_huge, extra for extra_args) is close too.
        String longestOverlap = null;
        for (final String candidate : candidates)
        {
            final boolean overlaps = name.length() >= 3 && candidate.length() >= 3 &&
                (name.startsWith(candidate) || candidate.startsWith(name));
            if (overlaps && (longestOverlap == null || candidate.length() > longestOverlap.length()))
            {
                longestOverlap = candidate;
            }
        }

        return longestOverlap;
    }

    private static int editDistance(final String a, final String b)
    {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++)
        {
            previous[j] = j;
        }

        for (int i = 1; i <= a.length(); i++)
        {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++)
            {
                final int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
            }
            final int[] swap = previous;
            previous = current;
            current = swap;
        }

        return previous[b.length()];
    }
}
