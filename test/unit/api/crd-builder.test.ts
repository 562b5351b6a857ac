import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { toStructuralSchema } from '../../../src/api/crd-builder.js';

describe('toStructuralSchema', () => {
  it('turns a union of literals into a string enum and keeps its description and rules', () => {
    const schema = Type.Union([Type.Literal('drive'), Type.Literal('ssdproxy')], {
      description: 'mode',
      'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'immutable' }],
    });
    expect(toStructuralSchema(schema)).toEqual({
      type: 'string',
      enum: ['drive', 'ssdproxy'],
      description: 'mode',
      'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'immutable' }],
    });
  });

  it('turns a single literal into a one-value enum', () => {
    expect(toStructuralSchema(Type.Literal('sign-drives', { description: 'action' }))).toEqual({
      type: 'string',
      enum: ['sign-drives'],
      description: 'action',
    });
  });

  it('turns a string record into additionalProperties', () => {
    expect(toStructuralSchema(Type.Record(Type.String(), Type.String(), { description: 'labels' }))).toEqual({
      type: 'object',
      description: 'labels',
      additionalProperties: { type: 'string' },
    });
  });

  it('drops $id, additionalProperties: false and TypeBox bookkeeping', () => {
    const schema = Type.Object(
      { a: Type.Optional(Type.String({ description: 'a' })) },
      { $id: 'X', additionalProperties: false, description: 'x' },
    );
    expect(toStructuralSchema(schema)).toEqual({
      type: 'object',
      description: 'x',
      properties: { a: { type: 'string', description: 'a' } },
    });
  });

  it('keeps required, bounds and the x-kubernetes extensions', () => {
    const schema = Type.Object(
      { n: Type.Integer({ description: 'n', minimum: 1, format: 'int64' }) },
      { description: 'o', 'x-kubernetes-map-type': 'atomic' },
    );
    expect(toStructuralSchema(schema)).toEqual({
      type: 'object',
      description: 'o',
      'x-kubernetes-map-type': 'atomic',
      required: ['n'],
      properties: { n: { type: 'integer', description: 'n', minimum: 1, format: 'int64' } },
    });
  });

  it('refuses keywords Kubernetes does not support, naming the path', () => {
    const schema = Type.Object({ n: Type.Number({ description: 'n', exclusiveMinimum: 0 }) }, { description: 'o' });
    expect(() => toStructuralSchema(schema, 'spec')).toThrow("spec.n: keyword 'exclusiveMinimum' is not supported");
  });

  it('refuses unions that are not unions of literals', () => {
    const schema = Type.Union([Type.String(), Type.Integer()], { description: 'x' });
    expect(() => toStructuralSchema(schema, 'spec.x')).toThrow(
      'spec.x: anyOf is only supported as a union of literals',
    );
  });

  it('refuses a property without a description', () => {
    const schema = Type.Object({ undocumented: Type.String() }, { description: 'o' });
    expect(() => toStructuralSchema(schema, 'spec')).toThrow('spec.undocumented: no description');
  });

  it('refuses a list map whose key is optional', () => {
    const item = Type.Object({ id: Type.Optional(Type.String({ description: 'id' })) }, { description: 'item' });
    const schema = Type.Array(item, {
      description: 'l',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['id'],
    });
    expect(() => toStructuralSchema(schema, 'status.l')).toThrow("status.l: list map key 'id' is not required");
  });
});
