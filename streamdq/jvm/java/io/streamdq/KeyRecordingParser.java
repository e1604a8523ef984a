package io.streamdq;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.JsonTokenId;
import com.fasterxml.jackson.core.util.JsonParserDelegate;
import java.io.IOException;

/**
 * A Jackson parser that passes every token through to Spark's JacksonParser unchanged and, on the
 * way, notes what the decoder needs besides the typed values: the record's top-level keys (in
 * order, repeats kept), whether the root is an object read to its end, and whether a non-finite
 * number token (NaN, Infinity) occurred anywhere (Spark's json_object_keys rejects those, so such a
 * record takes the exact path, as in the expression decoder).
 *
 * <p>The keys go into a {@link Keys} buffer that the decoder owns and reuses from record to
 * record (emptied when the parser is made): no list per record. skipChildren walks the skipped
 * tokens through nextToken so that nothing escapes the notes.
 */
final class KeyRecordingParser extends JsonParserDelegate {
  /** A reusable list of one record's top-level keys ({@code names[0..count)}). */
  static final class Keys {
    String[] names;
    int count;

    Keys(int width) {
      names = new String[Math.max(width, 4)];
    }

    void add(String k) {
      if (count == names.length) {
        names = java.util.Arrays.copyOf(names, count * 2);
      }
      names[count++] = k;
    }
  }

  final Keys keys;
  boolean rootObject;
  boolean rootClosed;
  boolean nonFinite;
  private int depth;

  /** {@code keys}: the buffer the record's top-level keys are written to (emptied here). */
  KeyRecordingParser(JsonParser d, Keys keys) {
    super(d);
    this.keys = keys;
    keys.count = 0;
  }

  @Override
  public JsonToken nextToken() throws IOException {
    JsonToken t = delegate.nextToken();
    if (t == null) {
      return null;
    }
    switch (t.id()) {
      case JsonTokenId.ID_FIELD_NAME:
        if (depth == 1) {
          keys.add(delegate.currentName());
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
        if (delegate.isNaN()) {
          nonFinite = true;
        }
        break;
      default:
        break;
    }
    return t;
  }

  @Override
  public JsonToken nextValue() throws IOException {
    JsonToken t = nextToken();
    if (t == JsonToken.FIELD_NAME) {
      t = nextToken();
    }
    return t;
  }

  @Override
  public JsonParser skipChildren() throws IOException {
    JsonToken t = delegate.currentToken();
    if (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY) {
      int target = depth - 1;
      while (depth > target) {
        if (nextToken() == null) {
          break;
        }
      }
    }
    return this;
  }
}
