package v1

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// Protobuf encoding in upstream's wire format (kube-aggregator's
// generated.proto: field numbers and types are its), written by hand with
// protowire. Like go-to-protobuf's output, scalar fields are always
// written and nil pointers never.

type marshaler interface{ Marshal() ([]byte, error) }

func appendMessage(b []byte, num protowire.Number, m marshaler) ([]byte, error) {
	data, err := m.Marshal()
	if err != nil {
		return nil, err
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, data), nil
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// fields calls f for each field of a message; f gets the raw bytes of
// length-delimited fields and the value of varints.
func fields(data []byte, f func(num protowire.Number, typ protowire.Type, raw []byte, v uint64) error) error {
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 {
			return protowire.ParseError(n)
		}
		data = data[n:]
		var raw []byte
		var v uint64
		switch typ {
		case protowire.BytesType:
			raw, n = protowire.ConsumeBytes(data)
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(data)
		default:
			n = protowire.ConsumeFieldValue(num, typ, data)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		data = data[n:]
		if err := f(num, typ, raw, v); err != nil {
			return err
		}
	}
	return nil
}

var errWireType = errors.New("apiregistration/v1: wrong wire type")

func want(typ, is protowire.Type) error {
	if typ != is {
		return errWireType
	}
	return nil
}

// Marshal encodes r.
func (r *ServiceReference) Marshal() ([]byte, error) {
	b := appendString(nil, 1, r.Namespace)
	b = appendString(b, 2, r.Name)
	if r.Port != nil {
		b = appendVarint(b, 3, uint64(*r.Port))
	}
	return b, nil
}

// Unmarshal decodes into r.
func (r *ServiceReference) Unmarshal(data []byte) error {
	*r = ServiceReference{}
	return fields(data, func(num protowire.Number, typ protowire.Type, raw []byte, v uint64) error {
		switch num {
		case 1:
			r.Namespace = string(raw)
			return want(typ, protowire.BytesType)
		case 2:
			r.Name = string(raw)
			return want(typ, protowire.BytesType)
		case 3:
			r.Port = new(int32(v))
			return want(typ, protowire.VarintType)
		}
		return nil
	})
}

// Marshal encodes s.
func (s *APIServiceSpec) Marshal() ([]byte, error) {
	var b []byte
	var err error
	if s.Service != nil {
		if b, err = appendMessage(b, 1, s.Service); err != nil {
			return nil, err
		}
	}
	b = appendString(b, 2, s.Group)
	b = appendString(b, 3, s.Version)
	b = appendVarint(b, 4, protowire.EncodeBool(s.InsecureSkipTLSVerify))
	if s.CABundle != nil {
		b = protowire.AppendTag(b, 5, protowire.BytesType)
		b = protowire.AppendBytes(b, s.CABundle)
	}
	b = appendVarint(b, 7, uint64(s.GroupPriorityMinimum))
	b = appendVarint(b, 8, uint64(s.VersionPriority))
	return b, nil
}

// Unmarshal decodes into s.
func (s *APIServiceSpec) Unmarshal(data []byte) error {
	*s = APIServiceSpec{}
	return fields(data, func(num protowire.Number, typ protowire.Type, raw []byte, v uint64) error {
		switch num {
		case 1:
			s.Service = &ServiceReference{}
			if err := want(typ, protowire.BytesType); err != nil {
				return err
			}
			return s.Service.Unmarshal(raw)
		case 2:
			s.Group = string(raw)
			return want(typ, protowire.BytesType)
		case 3:
			s.Version = string(raw)
			return want(typ, protowire.BytesType)
		case 4:
			s.InsecureSkipTLSVerify = v != 0
			return want(typ, protowire.VarintType)
		case 5:
			s.CABundle = append([]byte{}, raw...)
			return want(typ, protowire.BytesType)
		case 7:
			s.GroupPriorityMinimum = int32(v)
			return want(typ, protowire.VarintType)
		case 8:
			s.VersionPriority = int32(v)
			return want(typ, protowire.VarintType)
		}
		return nil
	})
}

// Marshal encodes c.
func (c *APIServiceCondition) Marshal() ([]byte, error) {
	b := appendString(nil, 1, string(c.Type))
	b = appendString(b, 2, string(c.Status))
	b, err := appendMessage(b, 3, &c.LastTransitionTime)
	if err != nil {
		return nil, err
	}
	b = appendString(b, 4, c.Reason)
	return appendString(b, 5, c.Message), nil
}

// Unmarshal decodes into c.
func (c *APIServiceCondition) Unmarshal(data []byte) error {
	*c = APIServiceCondition{}
	return fields(data, func(num protowire.Number, typ protowire.Type, raw []byte, _ uint64) error {
		if err := want(typ, protowire.BytesType); err != nil && num >= 1 && num <= 5 {
			return err
		}
		switch num {
		case 1:
			c.Type = APIServiceConditionType(raw)
		case 2:
			c.Status = ConditionStatus(raw)
		case 3:
			return c.LastTransitionTime.Unmarshal(raw)
		case 4:
			c.Reason = string(raw)
		case 5:
			c.Message = string(raw)
		}
		return nil
	})
}

// Marshal encodes s.
func (s *APIServiceStatus) Marshal() ([]byte, error) {
	var b []byte
	var err error
	for i := range s.Conditions {
		if b, err = appendMessage(b, 1, &s.Conditions[i]); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// Unmarshal decodes into s.
func (s *APIServiceStatus) Unmarshal(data []byte) error {
	*s = APIServiceStatus{}
	return fields(data, func(num protowire.Number, typ protowire.Type, raw []byte, _ uint64) error {
		if num != 1 {
			return nil
		}
		if err := want(typ, protowire.BytesType); err != nil {
			return err
		}
		var c APIServiceCondition
		if err := c.Unmarshal(raw); err != nil {
			return err
		}
		s.Conditions = append(s.Conditions, c)
		return nil
	})
}

// Reset clears a (the protobuf decoder's contract).
func (a *APIService) Reset() { *a = APIService{} }

// Marshal encodes a.
func (a *APIService) Marshal() ([]byte, error) {
	b, err := appendMessage(nil, 1, &a.ObjectMeta)
	if err == nil {
		b, err = appendMessage(b, 2, &a.Spec)
	}
	if err == nil {
		b, err = appendMessage(b, 3, &a.Status)
	}
	return b, err
}

// Unmarshal decodes into a.
func (a *APIService) Unmarshal(data []byte) error {
	tm := a.TypeMeta
	*a = APIService{TypeMeta: tm}
	return fields(data, func(num protowire.Number, typ protowire.Type, raw []byte, _ uint64) error {
		if num < 1 || num > 3 {
			return nil
		}
		if err := want(typ, protowire.BytesType); err != nil {
			return err
		}
		switch num {
		case 1:
			return a.ObjectMeta.Unmarshal(raw)
		case 2:
			return a.Spec.Unmarshal(raw)
		default:
			return a.Status.Unmarshal(raw)
		}
	})
}

// Reset clears l.
func (l *APIServiceList) Reset() { *l = APIServiceList{} }

// Marshal encodes l.
func (l *APIServiceList) Marshal() ([]byte, error) {
	b, err := appendMessage(nil, 1, &l.ListMeta)
	for i := range l.Items {
		if err != nil {
			break
		}
		b, err = appendMessage(b, 2, &l.Items[i])
	}
	return b, err
}

// Unmarshal decodes into l.
func (l *APIServiceList) Unmarshal(data []byte) error {
	tm := l.TypeMeta
	*l = APIServiceList{TypeMeta: tm}
	return fields(data, func(num protowire.Number, typ protowire.Type, raw []byte, _ uint64) error {
		switch num {
		case 1:
			if err := want(typ, protowire.BytesType); err != nil {
				return err
			}
			return l.ListMeta.Unmarshal(raw)
		case 2:
			if err := want(typ, protowire.BytesType); err != nil {
				return err
			}
			var a APIService
			if err := a.Unmarshal(raw); err != nil {
				return fmt.Errorf("items[%d]: %w", len(l.Items), err)
			}
			l.Items = append(l.Items, a)
		}
		return nil
	})
}
