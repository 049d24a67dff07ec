package io.spraynic.cli;

import java.util.Locale;

/**
 * A small builder for the one-line JSON objects the commands print with {@code --json}.
 */
final class Json
{
    private final StringBuilder text = new StringBuilder("{");

    Json field(final String name, final String value)
    {
        key(name);
        if (null == value)
        {
            text.append("null");
        }
        else
        {
            quote(value);
        }
        return this;
    }

    Json field(final String name, final long value)
    {
        key(name).append(value);
        return this;
    }

    Json field(final String name, final double value)
    {
        key(name).append(Double.isFinite(value) ? String.format(Locale.ROOT, "%.6g", value) : "null");
        return this;
    }

    Json field(final String name, final boolean value)
    {
        key(name).append(value);
        return this;
    }

    Json raw(final String name, final String json)
    {
        key(name).append(json);
        return this;
    }

    String build()
    {
        return text.append('}').toString();
    }

    private StringBuilder key(final String name)
    {
        if (text.length() > 1)
        {
            text.append(',');
        }
        quote(name);
        return text.append(':');
    }

    private void quote(final String value)
    {
        text.append('"');
        for (int i = 0; i < value.length(); i++)
        {
            final char c = value.charAt(i);
            switch (c)
            {
                case '"' -> text.append("\\\"");
                case '\\' -> text.append("\\\\");
                case '\n' -> text.append("\\n");
                case '\r' -> text.append("\\r");
                case '\t' -> text.append("\\t");
                default ->
                {
                    if (c < 0x20)
                    {
                        text.append(String.format(Locale.ROOT, "\\u%04x", (int)c));
                    }
                    else
                    {
                        text.append(c);
                    }
                }
            }
        }
        text.append('"');
    }
}
