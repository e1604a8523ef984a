package io.streamdq;

import java.util.Arrays;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.codegen.CodeBlock;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import org.apache.spark.sql.catalyst.expressions.codegen.FalseLiteral$;
import org.apache.spark.sql.catalyst.expressions.codegen.JavaCode;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The Catalyst expression that runs {@link JsonDecode} on one payload column (STRING or BINARY),
 * in Spark's internal values on both sides: no external Row, no copy of the payload's bytes.
 * Its generated code is one call per row, {@code decoder.decode(payload)}, inside the stage's
 * whole-stage code, and the result is never NULL. Each task deserializes its own expression and
 * so its own decoder (whose parser state is per instance).
 */
public final class JsonDecodeExpression extends Expression implements java.io.Serializable {
  private static final long serialVersionUID = 1L;

  private final Expression child;
  private final JsonDecode decoder;
  private final StructType out;
  private final scala.collection.immutable.Seq<Expression> children;

  public JsonDecodeExpression(Expression child, JsonDecode decoder, StructType out) {
    this.child = child;
    this.children = scala.jdk.javaapi.CollectionConverters.asScala(Arrays.asList(child)).toList();
    this.decoder = decoder;
    this.out = out;
  }

  /** The payload expression. */
  public Expression child() {
    return child;
  }

  @Override
  public scala.collection.immutable.Seq<Expression> children() {
    return children;
  }

  @Override
  public Expression withNewChildrenInternal(scala.collection.immutable.IndexedSeq<Expression> c) {
    return new JsonDecodeExpression(c.head(), decoder.fresh(), out);
  }

  @Override
  public DataType dataType() {
    return out;
  }

  @Override
  public boolean nullable() {
    return false;
  }

  @Override
  public String prettyName() {
    return "streamdq_decode_json";
  }

  @Override
  public org.apache.spark.sql.catalyst.analysis.TypeCheckResult checkInputDataTypes() {
    DataType t = child.dataType();
    if (t instanceof StringType || t instanceof BinaryType) {
      return org.apache.spark.sql.catalyst.analysis.TypeCheckResult.TypeCheckSuccess$.MODULE$;
    }
    return new org.apache.spark.sql.catalyst.analysis.TypeCheckResult.TypeCheckFailure(
        "streamdq_decode_json needs a STRING or BINARY payload, got " + t.simpleString());
  }

  @Override
  public Object eval(InternalRow input) {
    Object v = child.eval(input);
    return v instanceof byte[] ? decoder.decode((byte[]) v) : decoder.decode((UTF8String) v);
  }

  @Override
  public ExprCode doGenCode(CodegenContext ctx, ExprCode ev) {
    ExprCode c = child.genCode(ctx);
    String ref = ctx.addReferenceObj("streamdqDecoder", decoder, JsonDecode.class.getName());
    String javaType = child.dataType() instanceof BinaryType ? "byte[]" : "UTF8String";
    String code =
        c.code().toString()
            + "\nInternalRow " + ev.value() + " = " + ref + ".decode("
            + c.isNull() + " ? (" + javaType + ") null : " + c.value() + ");\n";
    CodeBlock block =
        new CodeBlock(
            scala.jdk.javaapi.CollectionConverters.asScala(Arrays.asList(code)).toList(),
            scala.jdk.javaapi.CollectionConverters.asScala(Arrays.<JavaCode>asList()).toList());
    return ev.copy(block, FalseLiteral$.MODULE$, ev.value());
  }

  /** Plans show the payload only (not the schema's JSON and the output type, each row long). */
  @Override
  public scala.collection.Iterator<Object> stringArgs() {
    return scala.collection.Iterator$.MODULE$.single(child);
  }

  @Override
  public int productArity() {
    return 3;
  }

  @Override
  public Object productElement(int n) {
    switch (n) {
      case 0:
        return child;
      case 1:
        return decoder;
      case 2:
        return out;
      default:
        throw new IndexOutOfBoundsException(String.valueOf(n));
    }
  }

  @Override
  public boolean canEqual(Object that) {
    return that instanceof JsonDecodeExpression;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof JsonDecodeExpression)) {
      return false;
    }
    JsonDecodeExpression e = (JsonDecodeExpression) o;
    return child.equals(e.child) && decoder.sameConfig(e.decoder) && out.equals(e.out);
  }

  @Override
  public int hashCode() {
    return child.hashCode() * 31 + out.hashCode();
  }
}
