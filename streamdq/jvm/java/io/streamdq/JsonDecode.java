package io.streamdq;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.regex.Pattern;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.json.JsonToStructsEvaluator;
import org.apache.spark.sql.catalyst.json.CreateJacksonParser;
import org.apache.spark.sql.catalyst.json.JSONOptions;
import org.apache.spark.sql.catalyst.json.JacksonParser;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.catalyst.util.BadRecordException;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.catalyst.util.MapData;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;
import scala.Function1;
import scala.Function2;
import scala.Option;
import scala.collection.Iterator;
import scala.runtime.AbstractFunction1;
import scala.runtime.AbstractFunction2;

/**
 * streamdq's JSON decoder in one Jackson pass per record, run as a Catalyst expression
 * ({@link JsonDecodeExpression}): for a JSON payload (STRING or BINARY) it gives the schema's typed
 * values (exactly what {@code from_json} with a corrupt-record column gives: the same Spark
 * JacksonParser, options, time zone and partial results of a bad record), the record's error
 * reason, its drift facts (unknown, missing and type-error field names), the payload as valid
 * UTF-8 and whether its bytes were valid UTF-8.
 *
 * <p>The rules are those of streamdq.connectors.sources.decode.decode_json, whose Spark-expression
 * form is the reference: a record is clean when its top-level keys could be read (it is a JSON
 * object without NaN/Infinity tokens, as json_object_keys requires) and no top-level field
 * failed to convert; every other record takes the exact path (a lenient from_json to
 * MAP&lt;STRING,STRING&gt;, through Spark's own evaluator, and per-field reasons). The expression
 * decoder parses a clean record twice (the typed parse and the key scan); this one once.
 *
 * <p>Why an expression and not a Java UDF: a UDF takes external values and returns an external
 * Row, so every record paid a copy of its bytes (the cast to BINARY), a String round trip for
 * every string value, an Instant for every timestamp and a Row conversion back; and the UTF-8
 * check and repair were two more passes. Here the payload's own bytes are parsed in place, the
 * parser's internal row is handed on as it is, and the UTF-8 check is one pass (a repair only
 * for a payload that needs one).
 *
 * <p>Output struct (not NULL): {@code typed} STRUCT (the schema's fields as {@code _0.._n-1},
 * all nullable: the parser's own row, handed on without a copy; NULL when nothing could be read), then
 * {@code error} STRING (without the UTF-8 reason, which the caller adds by its policy),
 * {@code raw} STRING (the payload, invalid byte sequences as U+FFFD, as make_valid_utf8),
 * {@code invalid_utf8} BOOLEAN (is_valid_utf8's negation; FALSE for NULL), {@code unknown},
 * {@code missing}, {@code type_errors} ARRAY&lt;STRING&gt;.
 *
 * <p>Per record it allocates only what the output holds (the row, its values, the drift arrays
 * when not empty) and the parser: the key list and the present-field flags are buffers of the
 * decoder, reused record after record (one decoder serves one task, one record at a time).
 */
public final class JsonDecode implements java.io.Serializable {
  private static final long serialVersionUID = 3L;
  private static final int TYPED = 0;
  private static final int ERROR = 1;
  private static final int RAW = 2;
  private static final int INVALID = 3;
  private static final int UNKNOWN = 4;
  private static final int MISSING = 5;
  private static final int TYPE_ERRORS = 6;
  private static final int WIDTH = 7;
  private static final Pattern BLANK = Pattern.compile("^\\s*$");
  private static final int MAX_QUOTED = 60;
  private static final UTF8String EMPTY_PAYLOAD = UTF8String.fromString("empty payload");
  private static final UTF8String UNDECODABLE = UTF8String.fromString("undecodable JSON");
  private static final GenericArrayData NONE = new GenericArrayData(new Object[0]);

  private final String schemaJson;
  private final String[] required;
  private final String corruptName;
  private final String timeZone;
  private final String mapCorruptName;
  private final boolean allowDuplicateKeys;

  private transient StructType schema;
  private transient String[] names;
  private transient String[] expected;
  private transient boolean[] isRequired;
  private transient java.util.HashMap<String, Integer> index;
  private transient int[] first; // each field's first position among fields of its name
  private transient JacksonParser typed;
  private transient Function2<JsonFactory, UTF8String, JsonParser> create;
  private transient Function1<UTF8String, UTF8String> literal;
  private transient KeyRecordingParser.Notes notes; // the current record's keys and shape
  private transient com.fasterxml.jackson.core.sym.ByteQuadsCanonicalizer symbols; // field names
  private transient boolean[] seenBuf; // which schema fields the current record has
  private transient JsonToStructsEvaluator mapEval;

  public JsonDecode(
      String schemaJson,
      String[] required,
      String corruptName,
      String timeZone,
      String mapCorruptName,
      boolean allowDuplicateKeys) {
    this.schemaJson = schemaJson;
    this.required = required;
    this.corruptName = corruptName;
    this.timeZone = timeZone;
    this.mapCorruptName = mapCorruptName;
    this.allowDuplicateKeys = allowDuplicateKeys;
  }

  /** A decoder with the same configuration and its own parser state. */
  public JsonDecode fresh() {
    return new JsonDecode(
        schemaJson, required, corruptName, timeZone, mapCorruptName, allowDuplicateKeys);
  }

  /** True when {@code o} decodes with the same configuration (expression equality). */
  public boolean sameConfig(JsonDecode o) {
    return schemaJson.equals(o.schemaJson)
        && Arrays.equals(required, o.required)
        && corruptName.equals(o.corruptName)
        && timeZone.equals(o.timeZone)
        && mapCorruptName.equals(o.mapCorruptName)
        && allowDuplicateKeys == o.allowDuplicateKeys;
  }

  @Override
  public String toString() {
    return "JsonDecode(" + schemaJson + ", required=" + Arrays.toString(required) + ")";
  }

  /** The decoder's output type for a schema (JSON form of a StructType). */
  public static StructType outputType(String schemaJson) {
    StructType s = (StructType) DataType.fromJson(schemaJson);
    List<StructField> typed = new ArrayList<>();
    StructField[] fs = s.fields();
    for (int i = 0; i < fs.length; i++) { // by position: the schema's names may repeat
      typed.add(DataTypes.createStructField("_" + i, fs[i].dataType(), true));
    }
    List<StructField> out = new ArrayList<>();
    out.add(DataTypes.createStructField("typed", DataTypes.createStructType(typed), true));
    ArrayType strings = DataTypes.createArrayType(DataTypes.StringType, true);
    out.add(DataTypes.createStructField("error", DataTypes.StringType, true));
    out.add(DataTypes.createStructField("raw", DataTypes.StringType, true));
    out.add(DataTypes.createStructField("invalid_utf8", DataTypes.BooleanType, false));
    out.add(DataTypes.createStructField("unknown", strings, true));
    out.add(DataTypes.createStructField("missing", strings, true));
    out.add(DataTypes.createStructField("type_errors", strings, true));
    return DataTypes.createStructType(out);
  }

  /**
   * Registers the decoder for one schema as the session function {@code name} (one argument,
   * the payload, STRING or BINARY); the time zone, the corrupt-record column name and the
   * duplicate-key setting are the session's now.
   */
  public static void register(
      SparkSession spark,
      String name,
      String schemaJson,
      java.util.List<String> required,
      String corruptName) {
    String tz = spark.conf().get("spark.sql.session.timeZone");
    String mapCorrupt = spark.conf().get("spark.sql.columnNameOfCorruptRecord");
    boolean dup =
        Boolean.parseBoolean(spark.conf().get("spark.sql.variant.allowDuplicateKeys", "false"));
    final JsonDecode decoder =
        new JsonDecode(
            schemaJson, required.toArray(new String[0]), corruptName, tz, mapCorrupt, dup);
    final StructType out = outputType(schemaJson);
    final String fname = name;
    Function1<scala.collection.immutable.Seq<Expression>, Expression> builder =
        new AbstractFunction1<scala.collection.immutable.Seq<Expression>, Expression>() {
          @Override
          public Expression apply(scala.collection.immutable.Seq<Expression> args) {
            if (args.length() != 1) {
              throw new IllegalArgumentException(
                  fname + " takes one argument (the payload), got " + args.length());
            }
            return new JsonDecodeExpression(args.head(), decoder.fresh(), out);
          }
        };
    spark
        .sessionState()
        .functionRegistry()
        .createOrReplaceTempFunction(name, builder, "java_udf");
  }

  /**
   * The decoded frame of {@code df} (decode.py's _decode_json_jvm), its two projections built
   * from Column objects in one gateway call: no SQL text to parse per frame (Spark's SQL parser
   * costs several milliseconds per expression list, and more while the JIT is still warming).
   * {@code specJson}: {@code function} (the registered decoder), {@code value} (the payload
   * column), {@code decoded} (the staged struct's name), {@code fields} (the schema's names, in
   * order), {@code keep} ([input, output] name pairs passed through), {@code reason} (the reason
   * an invalid-UTF-8 payload's error starts with, or null to leave the error as it is) and
   * {@code cols} (the output names of error, raw, unknown, missing, type_errors, invalid_utf8).
   * Output: the fields, error, raw, unknown, missing, type_errors, invalid_utf8, the kept ones.
   */
  public static Dataset<Row> frame(Dataset<Row> df, String specJson) throws java.io.IOException {
    com.fasterxml.jackson.databind.JsonNode spec = Json.MAPPER.readTree(specJson);
    String decoded = spec.get("decoded").asText();
    List<Column> staged = new ArrayList<>();
    List<Column> out = new ArrayList<>();
    for (com.fasterxml.jackson.databind.JsonNode kv : spec.get("keep")) {
      staged.add(column(kv.get(0).asText()).alias(kv.get(1).asText()));
    }
    Column payload = column(spec.get("value").asText());
    staged.add(functions.call_function(spec.get("function").asText(), payload).alias(decoded));
    Column d = column(decoded);
    int i = 0;
    for (com.fasterxml.jackson.databind.JsonNode name : spec.get("fields")) {
      out.add(d.getField("typed").getField("_" + i).alias(name.asText()));
      i++;
    }
    com.fasterxml.jackson.databind.JsonNode cols = spec.get("cols");
    Column error = d.getField("error");
    com.fasterxml.jackson.databind.JsonNode reason = spec.get("reason");
    if (reason != null && !reason.isNull()) { // with_utf8_reason's rule
      Column both = functions.concat_ws("; ", functions.lit(reason.asText()), error);
      error = functions.when(d.getField("invalid_utf8"), both).otherwise(error);
    }
    out.add(error.alias(cols.get("error").asText()));
    for (String f : new String[] {"raw", "unknown", "missing", "type_errors", "invalid_utf8"}) {
      out.add(d.getField(f).alias(cols.get(f).asText()));
    }
    for (com.fasterxml.jackson.databind.JsonNode kv : spec.get("keep")) {
      out.add(column(kv.get(1).asText()));
    }
    return df.select(staged.toArray(new Column[0])).select(out.toArray(new Column[0]));
  }

  /** The column named {@code name} exactly (back-quoted: dots and back quotes are no syntax). */
  private static Column column(String name) {
    return functions.col("`" + name.replace("`", "``") + "`");
  }

  /** The driver's JSON reader for {@link #frame} (a holder: executors never load it). */
  private static final class Json {
    static final com.fasterxml.jackson.databind.ObjectMapper MAPPER =
        new com.fasterxml.jackson.databind.ObjectMapper();
  }

  /**
   * Runs a good, a bad, a blank and a non-UTF-8 record through a decoder for {@code schemaJson}
   * on this JVM (no Spark job): a jar compiled against another Spark fails here, at start-up,
   * with a linkage error, instead of in a task. Returns the decoded rows' text.
   */
  public static String selfTest(String schemaJson, String corruptName, String timeZone) {
    JsonDecode d =
        new JsonDecode(schemaJson, new String[0], corruptName, timeZone, "_corrupt_record", false);
    StringBuilder out = new StringBuilder();
    String[] samples = {"{}", "{\"x\": [1, NaN}", " "};
    for (String sample : samples) {
      out.append(d.decode(UTF8String.fromString(sample))).append('\n');
    }
    out.append(d.decode(new byte[] {'{', (byte) 0xff, '}'})).append('\n');
    out.append(d.decode((UTF8String) null)).append('\n');
    return out.toString();
  }

  private void init() {
    schema = (StructType) DataType.fromJson(schemaJson);
    StructField[] fs = schema.fields();
    int n = fs.length;
    names = new String[n];
    expected = new String[n];
    isRequired = new boolean[n];
    HashSet<String> req = new HashSet<>(Arrays.asList(required));
    index = new java.util.HashMap<>();
    for (int i = 0; i < n; i++) {
      index.putIfAbsent(fs[i].name(), i);
      names[i] = fs[i].name();
      expected[i] = fs[i].dataType().simpleString().toUpperCase(java.util.Locale.ROOT);
      isRequired[i] = req.contains(names[i]);
    }
    notes = new KeyRecordingParser.Notes(n + 8);
    symbols = com.fasterxml.jackson.core.sym.ByteQuadsCanonicalizer.createRoot();
    seenBuf = new boolean[n];
    first = new int[n];
    for (int i = 0; i < n; i++) {
      first[i] = index.get(names[i]);
    }
    StructType actualSchema = (StructType) schema.asNullable();
    java.util.Map<String, String> jopts = new java.util.HashMap<>();
    jopts.put("mode", "PERMISSIVE");
    jopts.put("columnNameOfCorruptRecord", corruptName);
    scala.collection.immutable.Map<String, String> opts =
        scala.collection.immutable.Map$.MODULE$.from(
            scala.jdk.javaapi.CollectionConverters.asScala(jopts));
    JSONOptions options = new JSONOptions(opts, timeZone, corruptName);
    typed =
        new JacksonParser(actualSchema, options, false, JacksonParser.$lessinit$greater$default$4());
    final JsonDecode self = this;
    create =
        new AbstractFunction2<JsonFactory, UTF8String, JsonParser>() {
          @Override
          public JsonParser apply(JsonFactory f, UTF8String s) {
            try {
              return self.parser(f, s);
            } catch (java.io.IOException e) {
              throw new java.io.UncheckedIOException(e);
            }
          }
        };
    literal =
        new AbstractFunction1<UTF8String, UTF8String>() {
          @Override
          public UTF8String apply(UTF8String s) {
            return s;
          }
        };
    MapType mapType = DataTypes.createMapType(DataTypes.StringType, DataTypes.StringType, true);
    mapEval =
        JsonToStructsEvaluator.apply(
            scala.collection.immutable.Map$.MODULE$.<String, String>empty(),
            mapType,
            mapCorruptName,
            Option.apply(timeZone),
            allowDuplicateKeys);
  }

  /**
   * A noting parser for payload {@code s} from Spark's factory {@code f}: Jackson's UTF-8 byte
   * parser over the payload's bytes in place when they live in a byte array and Jackson would
   * read them as plain UTF-8 (the first bytes hold no byte order mark, which it would skip, and
   * no NUL, which its encoding detection reads as UTF-16 or UTF-32); else, as from_json reads
   * every payload, the factory's parser over the characters of its UTF-8 text, behind the noting
   * delegate. Either way a nested value read into a STRING field is rendered by Spark's
   * generator, as from_json does (its parser reads a character stream).
   */
  private JsonParser parser(JsonFactory f, UTF8String s) throws java.io.IOException {
    Object base = s.getBaseObject();
    int len = s.numBytes();
    if (base instanceof byte[] && f.isEnabled(JsonFactory.Feature.CANONICALIZE_FIELD_NAMES)) {
      byte[] buf = (byte[]) base;
      int start = (int) (s.getBaseOffset() - Platform.BYTE_ARRAY_OFFSET);
      if (plainUtf8Start(buf, start, len)) {
        com.fasterxml.jackson.core.io.IOContext ctxt =
            new com.fasterxml.jackson.core.io.IOContext(
                f.streamReadConstraints(),
                f.streamWriteConstraints(),
                com.fasterxml.jackson.core.ErrorReportConfiguration.defaults(),
                f._getBufferRecycler(),
                com.fasterxml.jackson.core.io.ContentReference.unknown(),
                false);
        ctxt.setEncoding(com.fasterxml.jackson.core.JsonEncoding.UTF8);
        return new KeyRecordingParser.Utf8(
            ctxt,
            f.getParserFeatures(),
            f.getCodec(),
            symbols.makeChildOrPlaceholder(f.getFactoryFeatures()),
            buf,
            start,
            start + len,
            notes);
      }
    }
    // as from_json reads every payload (CreateJacksonParser.utf8String): a character stream
    // decoded as UTF-8, where a byte order mark or a NUL is a character like any other
    java.io.Reader chars =
        new java.io.InputStreamReader(stream(s), java.nio.charset.StandardCharsets.UTF_8);
    return new KeyRecordingParser(f.createParser(chars), notes);
  }

  /**
   * True when Jackson's encoding detection reads {@code buf[start..start+len)} as UTF-8 without
   * a byte order mark: none of its first four bytes is NUL and it does not start with 0xEF (a
   * UTF-8 byte order mark's first byte; 0xFE and 0xFF, UTF-16's, are never in valid UTF-8).
   */
  static boolean plainUtf8Start(byte[] buf, int start, int len) {
    if (len > 0 && buf[start] == (byte) 0xEF) {
      return false;
    }
    for (int i = 0; i < Math.min(len, 4); i++) {
      if (buf[start + i] == 0) {
        return false;
      }
    }
    return true;
  }

  /** The bytes of {@code s} as a stream, without a copy when they live in a byte array. */
  private static java.io.InputStream stream(UTF8String s) {
    Object base = s.getBaseObject();
    if (base instanceof byte[]) {
      long off = s.getBaseOffset() - Platform.BYTE_ARRAY_OFFSET;
      return new java.io.ByteArrayInputStream((byte[]) base, (int) off, s.numBytes());
    }
    return new java.io.ByteArrayInputStream(s.getBytes());
  }

  /** The output row for a BINARY payload (its bytes, not copied). */
  public InternalRow decode(byte[] payload) {
    return decode(payload == null ? null : UTF8String.fromBytes(payload));
  }

  /** The output row for a STRING payload (see the class comment; never NULL). */
  public InternalRow decode(UTF8String payload) {
    if (schema == null) {
      init();
    }
    int n = names.length;
    Object[] out = new Object[WIDTH];
    int error = ERROR;
    int raw = RAW;
    int invalid = INVALID;
    if (payload == null) {
      out[error] = EMPTY_PAYLOAD;
      out[invalid] = Boolean.FALSE;
      return new GenericInternalRow(out);
    }
    boolean valid = ascii(payload) || payload.isValid();
    UTF8String text = valid ? payload : payload.makeValid();
    out[raw] = text;
    out[invalid] = valid ? Boolean.FALSE : Boolean.TRUE;
    notes.clear();
    // from_json's FailureSafeParser in PERMISSIVE mode, by hand (without its per-row copy into
    // a row with the corrupt-record column): a bad record keeps Spark's partial result, if any.
    InternalRow row;
    boolean corruptNull;
    try {
      Iterator<InternalRow> rows = typed.parse(text, create, literal).iterator();
      row = rows.hasNext() ? rows.next() : null;
      corruptNull = true;
    } catch (Exception e) {
      if (!(e instanceof BadRecordException)) {
        throw e instanceof RuntimeException ? (RuntimeException) e : new RuntimeException(e);
      }
      InternalRow[] partial = ((BadRecordException) e).partialResults().apply();
      row = partial.length > 0 ? partial[0] : null;
      corruptNull = false;
    }
    KeyRecordingParser.Notes rec = notes;
    boolean clean =
        row != null
            && corruptNull
            && rec.started
            && rec.rootObject
            && rec.rootClosed
            && !rec.nonFinite;
    out[TYPED] = row; // the parser's own row: a new one per record, not reused by it
    if (clean) {
      boolean[] seen = drift(rec.names, rec.count, out, n);
      StringBuilder err = null;
      for (int i = 0; i < n; i++) {
        if (!isRequired[i]) {
          continue;
        }
        String reason = null;
        if (!seen[first[i]]) {
          reason = "missing required field " + names[i];
        } else if (row.isNullAt(i)) {
          reason = "required field " + names[i] + " is null";
        }
        if (reason != null) {
          err = err == null ? new StringBuilder(reason) : err.append("; ").append(reason);
        }
      }
      out[error] = err == null ? null : UTF8String.fromString(err.toString());
      out[TYPE_ERRORS] = NONE;
      return new GenericInternalRow(out);
    }
    // The exact path: Spark's lenient map parse, per-field reasons.
    MapData m = (MapData) mapEval.evaluate(text);
    if (BLANK.matcher(text.toString()).find()) {
      out[error] = EMPTY_PAYLOAD;
    } else if (m == null) {
      out[error] = UNDECODABLE;
    }
    if (m == null) {
      return new GenericInternalRow(out); // keys, drift arrays: NULL
    }
    ArrayData mk = m.keyArray();
    ArrayData mv = m.valueArray();
    List<String> keys = new ArrayList<>(mk.numElements());
    List<String> values = new ArrayList<>(mk.numElements());
    for (int j = 0; j < mk.numElements(); j++) {
      keys.add(mk.getUTF8String(j).toString());
      values.add(mv.isNullAt(j) ? null : mv.getUTF8String(j).toString());
    }
    StringBuilder err = null;
    List<String> typeErrors = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      int at = keys.indexOf(names[i]);
      String v = at < 0 ? null : values.get(at);
      boolean tnull = row == null || row.isNullAt(i);
      boolean mismatch = v != null && tnull;
      String reason = null;
      if (mismatch) {
        typeErrors.add(names[i]);
        reason = "field " + names[i] + ": expected " + expected[i] + " got " + quote(v);
      } else if (isRequired[i] && at < 0) {
        reason = "missing required field " + names[i];
      } else if (isRequired[i] && v == null) {
        reason = "required field " + names[i] + " is null";
      }
      if (reason != null) {
        err = err == null ? new StringBuilder(reason) : err.append("; ").append(reason);
      }
    }
    if (out[error] == null) {
      out[error] = err == null ? null : UTF8String.fromString(err.toString());
    }
    drift(keys.toArray(new String[0]), keys.size(), out, n);
    out[TYPE_ERRORS] = strings(typeErrors);
    return new GenericInternalRow(out);
  }

  /**
   * Puts the drift arrays for the record's top-level keys {@code keys[0..count)} (in order,
   * repeats kept) into {@code out[UNKNOWN]} (Spark's array_except(keys, names), the distinct keys
   * the schema does not name, in the record's order) and {@code out[MISSING]}
   * (array_except(names, keys), in schema order); returns which schema fields are present, by
   * {@code first} (the decoder's buffer: valid until the next record).
   */
  private boolean[] drift(String[] keys, int count, Object[] out, int n) {
    boolean[] seen = seenBuf;
    Arrays.fill(seen, false);
    ArrayList<String> unknown = null;
    int next = 0; // keys mostly come in schema order: try the field after the last one found
    for (int j = 0; j < count; j++) {
      String k = keys[j];
      int at;
      if (next < n && names[next].equals(k)) {
        at = first[next];
        next++;
      } else {
        Integer found = index.get(k);
        at = found == null ? -1 : found;
        if (found != null) {
          next = at + 1;
        }
      }
      if (at >= 0) {
        seen[at] = true;
      } else if (unknown == null) {
        unknown = new ArrayList<>(2);
        unknown.add(k);
      } else if (!unknown.contains(k)) {
        unknown.add(k);
      }
    }
    ArrayList<String> missing = null;
    for (int i = 0; i < n; i++) {
      if (!seen[first[i]]) {
        if (missing == null) {
          missing = new ArrayList<>(2);
        }
        if (!missing.contains(names[i])) {
          missing.add(names[i]);
        }
      }
    }
    out[UNKNOWN] = unknown == null ? NONE : strings(unknown);
    out[MISSING] = missing == null ? NONE : strings(missing);
    return seen;
  }

  /** True when every byte of {@code s} is ASCII (then it is valid UTF-8), 8 bytes at a time. */
  static boolean ascii(UTF8String s) {
    Object base = s.getBaseObject();
    long off = s.getBaseOffset();
    int len = s.numBytes();
    int i = 0;
    for (; i + 8 <= len; i += 8) {
      if ((Platform.getLong(base, off + i) & 0x8080808080808080L) != 0) {
        return false;
      }
    }
    for (; i < len; i++) {
      if (Platform.getByte(base, off + i) < 0) {
        return false;
      }
    }
    return true;
  }

  private static GenericArrayData strings(java.util.Collection<String> xs) {
    Object[] a = new Object[xs.size()];
    int i = 0;
    for (String x : xs) {
      a[i++] = UTF8String.fromString(x);
    }
    return new GenericArrayData(a);
  }

  /** decode.py's _quote: at most 60 characters (code points), then "...", in single quotes. */
  private static String quote(String v) {
    int count = v.codePointCount(0, v.length());
    String shown = v;
    if (count > MAX_QUOTED) {
      shown = v.substring(0, v.offsetByCodePoints(0, MAX_QUOTED)) + "...";
    }
    return "'" + shown + "'";
  }
}
