package io.streamdq;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.JsonTokenId;
import com.fasterxml.jackson.core.ObjectCodec;
import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.core.io.IOContext;
import com.fasterxml.jackson.core.json.UTF8StreamJsonParser;
import com.fasterxml.jackson.core.sym.ByteQuadsCanonicalizer;
import com.fasterxml.jackson.core.util.JsonParserDelegate;
import java.io.IOException;

/**
 * A Jackson parser that passes every token through to Spark's JacksonParser unchanged and, on the
 * way, notes what the decoder needs besides the typed values ({@link Notes}): the record's
 * top-level keys (in order, repeats kept), whether the root is an object read to its end, and
 * whether a non-finite number token (NaN, Infinity) occurred anywhere (Spark's json_object_keys
 * rejects those, so such a record takes the exact path, as in the expression decoder).
 *
 * <p>Two forms with the same notes: {@link Utf8}, Jackson's own UTF-8 byte parser over the
 * payload's bytes in place (the common case: no delegation on the way from Spark's parser to
 * Jackson's, no copy of the bytes into a stream buffer), and this delegate around any parser
 * (payloads whose first bytes Jackson's encoding detection would read as something else than
 * plain UTF-8: a byte order mark, NUL bytes). Every way to the next token goes through
 * {@code nextToken} (skipChildren and the next-value shortcuts included), so nothing escapes the
 * notes.
 */
final class KeyRecordingParser extends JsonParserDelegate {
  /**
   * What one record's tokens showed; the decoder owns one and reuses it from record to record
   * (reset when a parser is made for a record: no list per record).
   */
  static final class Notes {
    String[] names;
    int count;
    boolean started; // a parser was made for the current record
    boolean rootObject;
    boolean rootClosed;
    boolean nonFinite;
    int depth;

    Notes(int width) {
      names = new String[Math.max(width, 4)];
    }

    /** Forgets the last record (before a new one is parsed). */
    void clear() {
      started = false;
    }

    /** A parser is made for the record: start noting. */
    void start() {
      started = true;
      count = 0;
      rootObject = false;
      rootClosed = false;
      nonFinite = false;
      depth = 0;
    }

    private void add(String k) {
      if (count == names.length) {
        names = java.util.Arrays.copyOf(names, count * 2);
      }
      names[count++] = k;
    }

    /** Notes token {@code t} that parser {@code p} has just read. */
    void note(JsonToken t, JsonParser p) throws IOException {
      switch (t.id()) {
        case JsonTokenId.ID_FIELD_NAME:
          if (depth == 1) {
            add(p.currentName());
          }
          break;
        case JsonTokenId.ID_START_OBJECT:
          if (depth == 0) {
            rootObject = true;
          }
          depth++;
          break;
        case JsonTokenId.ID_START_ARRAY:
          depth++;
          break;
        case JsonTokenId.ID_END_OBJECT:
        case JsonTokenId.ID_END_ARRAY:
          depth--;
          if (depth == 0 && rootObject) {
            rootClosed = true;
          }
          break;
        case JsonTokenId.ID_NUMBER_FLOAT:
          if (p.isNaN()) {
            nonFinite = true;
          }
          break;
        default:
          break;
      }
    }
  }

  /**
   * Jackson's UTF-8 byte parser over {@code buf[start..end)} (not copied), noting every token.
   * Made as JsonFactory.createParser makes it for UTF-8 input without a byte order mark (the
   * factory's parser features, read constraints and codec; a child of the decoder's own symbol
   * table), except that its content reference is not the byte array, so that Spark's STRING
   * converter renders a nested value with its generator, as from_json does.
   */
  static final class Utf8 extends UTF8StreamJsonParser {
    private final Notes notes;

    Utf8(
        IOContext ctxt,
        int features,
        ObjectCodec codec,
        ByteQuadsCanonicalizer sym,
        byte[] buf,
        int start,
        int end,
        Notes notes) {
      super(ctxt, features, null, codec, sym, buf, start, end, 0, false);
      this.notes = notes;
      notes.start();
    }

    @Override
    public JsonToken nextToken() throws IOException {
      JsonToken t = super.nextToken();
      if (t != null) {
        notes.note(t, this);
      }
      return t;
    }

    @Override
    public JsonToken nextValue() throws IOException {
      JsonToken t = nextToken();
      return t == JsonToken.FIELD_NAME ? nextToken() : t;
    }

    @Override
    public String nextFieldName() throws IOException {
      return nextToken() == JsonToken.FIELD_NAME ? currentName() : null;
    }

    @Override
    public boolean nextFieldName(SerializableString str) throws IOException {
      return nextToken() == JsonToken.FIELD_NAME && str.getValue().equals(currentName());
    }

    @Override
    public String nextTextValue() throws IOException {
      return nextToken() == JsonToken.VALUE_STRING ? getText() : null;
    }

    @Override
    public int nextIntValue(int defaultValue) throws IOException {
      return nextToken() == JsonToken.VALUE_NUMBER_INT ? getIntValue() : defaultValue;
    }

    @Override
    public long nextLongValue(long defaultValue) throws IOException {
      return nextToken() == JsonToken.VALUE_NUMBER_INT ? getLongValue() : defaultValue;
    }

    @Override
    public Boolean nextBooleanValue() throws IOException {
      JsonToken t = nextToken();
      return t == JsonToken.VALUE_TRUE ? Boolean.TRUE : t == JsonToken.VALUE_FALSE ? Boolean.FALSE : null;
    }

    @Override
    public JsonParser skipChildren() throws IOException {
      JsonToken t = currentToken();
      if (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY) {
        int target = notes.depth - 1;
        while (notes.depth > target) {
          if (nextToken() == null) {
            break;
          }
        }
      }
      return this;
    }
  }

  private final Notes notes;

  /** {@code notes}: where this record's facts go (started here). */
  KeyRecordingParser(JsonParser d, Notes notes) {
    super(d);
    this.notes = notes;
    notes.start();
  }

  @Override
  public JsonToken nextToken() throws IOException {
    JsonToken t = delegate.nextToken();
    if (t != null) {
      notes.note(t, delegate);
    }
    return t;
  }

  @Override
  public JsonToken nextValue() throws IOException {
    JsonToken t = nextToken();
    return t == JsonToken.FIELD_NAME ? nextToken() : t;
  }

  @Override
  public String nextFieldName() throws IOException {
    return nextToken() == JsonToken.FIELD_NAME ? currentName() : null;
  }

  @Override
  public boolean nextFieldName(SerializableString str) throws IOException {
    return nextToken() == JsonToken.FIELD_NAME && str.getValue().equals(currentName());
  }

  @Override
  public String nextTextValue() throws IOException {
    return nextToken() == JsonToken.VALUE_STRING ? getText() : null;
  }

  @Override
  public int nextIntValue(int defaultValue) throws IOException {
    return nextToken() == JsonToken.VALUE_NUMBER_INT ? getIntValue() : defaultValue;
  }

  @Override
  public long nextLongValue(long defaultValue) throws IOException {
    return nextToken() == JsonToken.VALUE_NUMBER_INT ? getLongValue() : defaultValue;
  }

  @Override
  public Boolean nextBooleanValue() throws IOException {
    JsonToken t = nextToken();
    return t == JsonToken.VALUE_TRUE ? Boolean.TRUE : t == JsonToken.VALUE_FALSE ? Boolean.FALSE : null;
  }

  @Override
  public JsonParser skipChildren() throws IOException {
    JsonToken t = delegate.currentToken();
    if (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY) {
      int target = notes.depth - 1;
      while (notes.depth > target) {
        if (nextToken() == null) {
          break;
        }
      }
    }
    return this;
  }
}
