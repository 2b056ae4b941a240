package otellibsql

import (
	"context"
	"errors"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/gohrana/libsql"
)

// ScopeName is the instrumentation scope of the spans a Tracer makes.
const ScopeName = "github.com/gohrana/libsql/otel"

// Tracer is a libsql.Tracer that makes an OpenTelemetry span of every
// event: set it on a connector with libsql.WithTracer. It is safe for
// concurrent use.
type Tracer struct {
	tracer trace.Tracer
}

var _ libsql.Tracer = (*Tracer)(nil)

// Option configures a Tracer.
type Option func(*config)

type config struct {
	provider trace.TracerProvider
}

// WithTracerProvider makes the Tracer's spans with tp instead of the
// global provider (otel.GetTracerProvider).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.provider = tp }
}

// NewTracer returns a Tracer.
func NewTracer(opts ...Option) *Tracer {
	var c config
	for _, opt := range opts {
		opt(&c)
	}
	if c.provider == nil {
		c.provider = otel.GetTracerProvider()
	}
	return &Tracer{tracer: c.provider.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL))}
}

// Start starts the event's span, a child of the span in ctx, and returns
// ctx with it.
func (t *Tracer) Start(ctx context.Context, ev *libsql.TraceEvent) context.Context {
	ctx, _ = t.tracer.Start(ctx, spanName(ev),
		trace.WithSpanKind(spanKind(ev)),
		trace.WithAttributes(startAttributes(ev)...))
	return ctx
}

// End ends the span Start put in ctx, with the event's outcome.
func (t *Tracer) End(ctx context.Context, ev *libsql.TraceEvent) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		span.End()
		return
	}
	span.SetAttributes(endAttributes(ev)...)
	if ev.Err != nil {
		recordError(span, ev.Err)
	}
	span.End()
}

// spanName names the event's span: after its operation for a statement
// (the database conventions' {db.operation.name}, or {db.system.name} for
// a statement that starts with no keyword), a fixed name and the kind of
// request, retry or wait for the driver's own.
func spanName(ev *libsql.TraceEvent) string {
	switch ev.Kind {
	case libsql.TraceStatement:
		if op := operation(ev); op != "" {
			return op
		}
		return dbSystem.Value.AsString()
	case libsql.TraceBatch:
		return "BATCH"
	case libsql.TraceRequest:
		if ev.Request == "" {
			return "libsql.request"
		}
		return "libsql.request " + ev.Request
	case libsql.TraceFetch:
		return "libsql.fetch"
	case libsql.TraceRetry:
		return "libsql.retry " + ev.Retry.String()
	case libsql.TraceWait:
		return "libsql.wait " + ev.Wait.String()
	}
	return "libsql"
}

// operation is a statement's db.operation.name: its first keyword, upper
// case.
func operation(ev *libsql.TraceEvent) string { return strings.ToUpper(ev.Keyword) }

// spanKind is client for what the application called (a statement, a
// Batch) and internal for the driver's own work under it.
func spanKind(ev *libsql.TraceEvent) trace.SpanKind {
	switch {
	case ev.Kind == libsql.TraceStatement, ev.Kind == libsql.TraceBatch && ev.Deferred == 0:
		return trace.SpanKindClient
	}
	return trace.SpanKindInternal
}

// recordError records err on span: as an exception event, the span's
// status, error.type and, for an error the server reported, its code as
// db.response.status_code.
func recordError(span trace.Span, err error) {
	span.RecordError(err)
	span.SetStatus(codes.Error, err.Error())
	var e *libsql.Error
	if errors.As(err, &e) && e.Code != "" {
		span.SetAttributes(semconv.ErrorTypeKey.String(e.Code), semconv.DBResponseStatusCode(e.Code))
		return
	}
	span.SetAttributes(semconv.ErrorType(err))
}
